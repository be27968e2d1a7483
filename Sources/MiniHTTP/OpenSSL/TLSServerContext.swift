import COpenSSL
import Glibc

/// What a server speaks TLS with: a certificate chain and its private key (PEM files), TLS 1.2
/// and 1.3, OpenSSL's default ciphers. Checked when made — unreadable or oversized files, a key
/// that does not match the certificate, a certificate outside its validity — so a server never
/// starts with TLS it cannot serve. Shared by every connection; immutable once made.
public final class TLSServerContext: @unchecked Sendable {
    /// Why a context could not be made, in words for the command line.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What is wrong, naming the file.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// The largest key file read.
    public static let maxFileBytes = 1024 * 1024
    /// The largest certificate chain file read: OpenSSL builds the whole chain into every
    /// handshake (a 1 MiB chain cost 1 MB per stalled handshake), and clients refuse
    /// a certificate message over 100 KiB anyway. A generated chain is 1.3 KB.
    public static let maxChainBytes = 64 * 1024
    /// The most certificates a chain file may hold, leaf included.
    public static let maxChainCertificates = 10

    let context: OpaquePointer
    /// The leaf certificate's notAfter, seconds since 1970.
    public let notAfter: Int64

    /// Loads `certificateChain` (leaf first, then intermediates) and `privateKey`.
    public init(certificateChain: String, privateKey: String) throws(Failure) {
        try Self.checkFile(certificateChain, what: "certificate", maxBytes: Self.maxChainBytes)
        try Self.checkFile(privateKey, what: "key", maxBytes: Self.maxFileBytes)
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw Failure(message: Self.drainErrors("SSL_CTX_new failed")) }
        _ = shim_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = SSL_CTX_set_options(context, shim_server_options())
        _ = shim_SSL_CTX_set_mode(context, shim_nonblocking_modes())
        SSL_CTX_set_default_passwd_cb(context, shim_no_password)
        guard SSL_CTX_use_certificate_chain_file(context, certificateChain) == 1 else {
            SSL_CTX_free(context)
            throw Failure(message: Self.drainErrors("\(certificateChain): not a PEM certificate chain"))
        }
        let extra = Int(shim_SSL_CTX_chain_count(context))
        guard extra >= 0 else {
            SSL_CTX_free(context)
            throw Failure(message: Self.drainErrors("certificate file \(certificateChain): OpenSSL cannot list its chain"))
        }
        let certificates = extra + 1
        guard certificates <= Self.maxChainCertificates else {
            SSL_CTX_free(context)
            throw Failure(message: "certificate file \(certificateChain): \(certificates) certificates, more than \(Self.maxChainCertificates) (clients refuse long chains)")
        }
        guard let file = BIO_new_file(privateKey, "r") else {
            SSL_CTX_free(context)
            throw Failure(message: Self.drainErrors("key file \(privateKey): cannot open it"))
        }
        let key = shim_read_private_key(file)
        BIO_free(file)
        guard let key else {
            SSL_CTX_free(context)
            throw Failure(message: Self.drainErrors("\(privateKey): not an unencrypted PEM private key"))
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            SSL_CTX_free(context)
            throw Failure(message: Self.drainErrors("\(privateKey) does not match the certificate in \(certificateChain)"))
        }
        guard let leaf = SSL_CTX_get0_certificate(context) else {
            SSL_CTX_free(context)
            throw Failure(message: "\(certificateChain): no certificate")
        }
        if X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0 {
            SSL_CTX_free(context)
            throw Failure(message: "\(certificateChain): the certificate is not valid yet")
        }
        if X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0 {
            SSL_CTX_free(context)
            throw Failure(message: "\(certificateChain): the certificate has expired")
        }
        var days: Int32 = 0
        var seconds: Int32 = 0
        let now = Int64(time(nil))
        notAfter = ASN1_TIME_diff(&days, &seconds, nil, X509_get0_notAfter(leaf)) == 1 ? now + Int64(days) * 86_400 + Int64(seconds) : now
        self.context = context
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A regular, readable file of at most `maxBytes`, checked before OpenSSL reads it.
    private static func checkFile(_ path: String, what: String, maxBytes: Int) throws(Failure) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(message: "\(what) file \(path): \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(message: "\(what) file \(path): not a regular file") }
        guard info.st_size <= maxBytes else { throw Failure(message: "\(what) file \(path): over \(maxBytes) bytes") }
        guard access(path, R_OK) == 0 else { throw Failure(message: "\(what) file \(path): \(String(cString: strerror(errno)))") }
    }

    /// `context`, then OpenSSL's queued reasons, the queue emptied.
    static func drainErrors(_ context: String) -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) { reasons.append(String(cString: reason)) }
        }
        return reasons.isEmpty ? context : "\(context) (\(reasons.joined(separator: "; ")))"
    }
}
