#ifndef APPLEIDMOCK_COPENSSL_SHIM_H
#define APPLEIDMOCK_COPENSSL_SHIM_H

// The only C the JOSE target (crypto) and MiniHTTP's OpenSSL/ folder (TLS) see. Macros and variadic functions are wrapped in
// `static inline` functions because Swift cannot import them.

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/// SSL_set_tlsext_host_name (SNI) is a macro over SSL_ctrl.
static inline long shim_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline long shim_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

/// SSL_CTX_set_mode is a macro over SSL_CTX_ctrl.
static inline long shim_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

/// SSL_CTX_set_session_cache_mode is a macro over SSL_CTX_ctrl.
static inline long shim_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

/// The SSL_MODE_* flags a non-blocking server writes with, and releasing idle buffers.
static inline long shim_nonblocking_modes(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS;
}

/// SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF
/// (composite 64-bit constants). The last makes a peer that closes its socket without
/// close_notify an orderly end (SSL_ERROR_ZERO_RETURN), as in OpenSSL 1.1, instead of an error
/// that would lose the requests it sent before closing.
static inline uint64_t shim_server_options(void) {
    return SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF;
}

/// SSL_OP_IGNORE_UNEXPECTED_EOF for clients: a server that closes without close_notify ends
/// the response (HTTP frames it by length or by the close itself).
static inline uint64_t shim_client_options(void) {
    return SSL_OP_IGNORE_UNEXPECTED_EOF;
}

/// Adds the extension `nid` with OpenSSL's text form `value` (e.g. "DNS:localhost,IP:::1") to
/// `cert`, issued by `issuer` (the certificate itself when self-signed). 1 on success.
static inline int shim_add_extension(X509 *issuer, X509 *cert, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (extension == NULL) return 0;
    int added = X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
    return added;
}

/// The certificates after the leaf that SSL_CTX_use_certificate_chain_file loaded
/// (SSL_CTX_get0_chain_certs is a macro over SSL_CTX_ctrl); -1 when unknown.
static inline int shim_SSL_CTX_chain_count(SSL_CTX *ctx) {
    STACK_OF(X509) *chain = NULL;
    if (SSL_CTX_get0_chain_certs(ctx, &chain) != 1) return -1;
    return chain == NULL ? 0 : sk_X509_num(chain);
}

/// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long shim_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/// OPENSSL_free is a macro that passes __FILE__/__LINE__.
static inline void shim_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/// BN_num_bytes is a macro over BN_num_bits.
static inline int shim_BN_num_bytes(const BIGNUM *bn) {
    return BN_num_bytes(bn);
}

/// EVP_PKEY_Q_keygen is variadic; this is EVP_RSA_gen without the macro.
static inline EVP_PKEY *shim_generate_rsa(unsigned int bits) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
}

/// EVP_PKEY_Q_keygen is variadic; this is EVP_EC_gen("P-256") without the macro.
static inline EVP_PKEY *shim_generate_p256(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/// A password callback that refuses: encrypted PEM must fail instead of prompting on a terminal.
static inline int shim_no_password(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer; (void)size; (void)rwflag; (void)userdata;
    return 0;
}

/// Reads a PEM private key (PKCS#8 or traditional) without ever prompting for a password.
static inline EVP_PKEY *shim_read_private_key(BIO *bio) {
    return PEM_read_bio_PrivateKey(bio, NULL, shim_no_password, NULL);
}

/// Reads a PEM SubjectPublicKeyInfo without ever prompting for a password.
static inline EVP_PKEY *shim_read_public_key(BIO *bio) {
    return PEM_read_bio_PUBKEY(bio, NULL, shim_no_password, NULL);
}

/// EVP_PKEY_PUBLIC_KEY is a composite macro.
static inline int shim_EVP_PKEY_PUBLIC_KEY(void) {
    return EVP_PKEY_PUBLIC_KEY;
}

/// EVP_PKEY_KEYPAIR (public and private halves) is a composite macro.
static inline int shim_EVP_PKEY_KEYPAIR(void) {
    return EVP_PKEY_KEYPAIR;
}

#endif
