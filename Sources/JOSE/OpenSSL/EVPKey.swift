import COpenSSL
import Synchronization

/// The one owner of an `EVP_PKEY*`: frees it in `deinit` and never mutates it after init.
///
/// Immutable `EVP_PKEY`s may be used from several threads at once in OpenSSL 3; every
/// operation below works on its own `EVP_MD_CTX` (signatures copy a template only read after it
/// is made), so sharing an `EVPKey` is safe.
final class EVPKey: @unchecked Sendable {
    /// The owned key.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    private init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// A context set up for signing with SHA-256, made on first use and only read after: each
    /// signature copies it (`EVP_MD_CTX_copy_ex`, a fraction of a microsecond) instead of running
    /// `EVP_DigestSignInit`, whose provider lookups cost microseconds and contend across threads.
    private let signingTemplate = Mutex<OpaquePointer?>(nil)

    /// Frees the key.
    deinit {
        signingTemplate.withLock { template in
            if let template { EVP_MD_CTX_free(template) }
        }
        EVP_PKEY_free(pointer)
    }

    // MARK: - Making keys

    /// A fresh RSA key of `bits` bits (public exponent 65537).
    static func generateRSA(bits: Int) throws(JOSEError) -> EVPKey {
        guard let key = shim_generate_rsa(UInt32(clamping: bits)) else {
            throw OpenSSL.failure("EVP_PKEY_Q_keygen(RSA)")
        }
        return EVPKey(owning: key)
    }

    /// A fresh P-256 key.
    static func generateP256() throws(JOSEError) -> EVPKey {
        guard let key = shim_generate_p256() else { throw OpenSSL.failure("EVP_PKEY_Q_keygen(EC)") }
        return EVPKey(owning: key)
    }

    /// Reads a PEM private key: PKCS#8 `PRIVATE KEY` or a traditional `RSA/EC PRIVATE KEY`.
    /// Encrypted PEM is refused without prompting.
    static func readPrivate(pem: String) throws(JOSEError) -> EVPKey {
        try checkPEMSize(pem)
        let key = try OpenSSL.withReadBIO(pem) { bio throws(JOSEError) in shim_read_private_key(bio) }
        guard let key else {
            throw JOSEError.invalidKey("not a readable PEM private key (\(OpenSSL.drainErrors()))")
        }
        let owner = EVPKey(owning: key)
        try owner.checkPair()
        return owner
    }

    /// Reads a PEM SubjectPublicKeyInfo (`PUBLIC KEY`).
    static func readPublic(pem: String) throws(JOSEError) -> EVPKey {
        try checkPEMSize(pem)
        let key = try OpenSSL.withReadBIO(pem) { bio throws(JOSEError) in shim_read_public_key(bio) }
        guard let key else {
            throw JOSEError.invalidKey("not a readable PEM public key (\(OpenSSL.drainErrors()))")
        }
        let owner = EVPKey(owning: key)
        try owner.checkPublic()
        return owner
    }

    /// PEM text is bounded: no real key of ours comes near 64 KiB.
    private static func checkPEMSize(_ pem: String) throws(JOSEError) {
        guard pem.utf8.count <= 64 * 1024 else { throw JOSEError.invalidKey("PEM larger than 64 KiB") }
    }

    /// An RSA public key from big-endian modulus and exponent bytes (`EVP_PKEY_fromdata`).
    /// `checked` runs `EVP_PKEY_public_check` (SP 800-56B tests on the modulus, about a
    /// millisecond): needed for a key from outside, not for the public half of a private key
    /// that passed its pair check.
    static func rsaPublic(modulus: [UInt8], exponent: [UInt8], checked: Bool = true) throws(JOSEError) -> EVPKey {
        guard let n = BN_bin2bn(modulus, Int32(clamping: modulus.count), nil) else {
            throw OpenSSL.failure("BN_bin2bn")
        }
        defer { BN_free(n) }
        guard let e = BN_bin2bn(exponent, Int32(clamping: exponent.count), nil) else {
            throw OpenSSL.failure("BN_bin2bn")
        }
        defer { BN_free(e) }
        let owner = try fromData(selection: shim_EVP_PKEY_PUBLIC_KEY(), rejected: "RSA modulus/exponent") { builder in
            // The builder keeps the name pointers, so they must be static strings.
            OSSL_PARAM_BLD_push_BN(builder, OpenSSL.cString("n"), n) == 1
                && OSSL_PARAM_BLD_push_BN(builder, OpenSSL.cString("e"), e) == 1
        }
        if checked { try owner.checkPublic() }
        return owner
    }

    /// An RSA key from the parameters `push` puts on a fresh `OSSL_PARAM_BLD` (false when a push
    /// failed), made by `EVP_PKEY_fromdata` with `selection` (public key, or key pair). A key
    /// OpenSSL refuses throws `invalidKey` saying `rejected` was rejected.
    static func fromData(
        selection: Int32,
        rejected: String,
        _ push: (OpaquePointer) -> Bool
    ) throws(JOSEError) -> EVPKey {
        guard let builder = OSSL_PARAM_BLD_new() else { throw OpenSSL.failure("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard push(builder) else { throw OpenSSL.failure("OSSL_PARAM_BLD_push_BN") }
        guard let params = OSSL_PARAM_BLD_to_param(builder) else {
            throw OpenSSL.failure("OSSL_PARAM_BLD_to_param")
        }
        defer { OSSL_PARAM_free(params) }
        // The context keeps the name pointer, so it must be a static string.
        guard let context = EVP_PKEY_CTX_new_from_name(nil, OpenSSL.cString("RSA"), nil) else {
            throw OpenSSL.failure("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { throw OpenSSL.failure("EVP_PKEY_fromdata_init") }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata(context, &key, selection, params) == 1, let key else {
            throw JOSEError.invalidKey("\(rejected) rejected (\(OpenSSL.drainErrors()))")
        }
        return EVPKey(owning: key)
    }

    /// A new key holding only the public half, via a DER SubjectPublicKeyInfo round trip.
    func publicOnly() throws(JOSEError) -> EVPKey {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw OpenSSL.failure("i2d_PUBKEY") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let key: OpaquePointer? = der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            guard i2d_PUBKEY(pointer, &cursor) == length else { return nil }
            var reader: UnsafePointer<UInt8>? = UnsafePointer(buffer.baseAddress)
            return d2i_PUBKEY(nil, &reader, Int(length))
        }
        guard let key else { throw OpenSSL.failure("d2i_PUBKEY") }
        return EVPKey(owning: key)
    }

    // MARK: - Checking keys

    /// Checks that the public half is well formed (`EVP_PKEY_public_check`): for RSA an odd
    /// modulus and a sane exponent, for EC a point on the curve.
    private func checkPublic() throws(JOSEError) {
        try check("EVP_PKEY_public_check", EVP_PKEY_public_check)
    }

    /// Checks that the private and public halves belong together, so a corrupted PEM that
    /// still parses is refused at load time, not at first use. For RSA a sign-and-verify round
    /// trip (~0.5 ms) stands in for `EVP_PKEY_pairwise_check`, whose SP 800-56B primality tests
    /// cost tens of milliseconds per key and dominated the mock's cold start.
    func checkPair() throws(JOSEError) {
        guard isA("RSA") else {
            return try check("EVP_PKEY_pairwise_check", EVP_PKEY_pairwise_check)
        }
        let probe = Array("pairwise consistency".utf8)
        guard verifySHA256(signature: try signSHA256(probe), message: probe) else {
            throw JOSEError.invalidKey("key failed a sign/verify consistency check")
        }
    }

    /// Runs one of OpenSSL's key checks in a fresh context.
    private func check(_ call: String, _ checker: (OpaquePointer?) -> Int32) throws(JOSEError) {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw OpenSSL.failure("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard checker(context) == 1 else {
            throw JOSEError.invalidKey("key failed \(call) (\(OpenSSL.drainErrors()))")
        }
    }

    // MARK: - Reading properties

    /// Whether the key is of OpenSSL key type `name` ("RSA", "EC", …).
    func isA(_ name: String) -> Bool {
        EVP_PKEY_is_a(pointer, name) == 1
    }

    /// The key size in bits.
    var bits: Int {
        Int(EVP_PKEY_get_bits(pointer))
    }

    /// The EC curve name ("prime256v1" for P-256), or nil if the key has no named group.
    var groupName: String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, "group", &buffer, buffer.count, &length) == 1 else {
            OpenSSL.clearErrors()
            return nil
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A big-number parameter ("n", "e", …) as big-endian bytes without leading zeros.
    func bigNumber(_ name: String) throws(JOSEError) -> [UInt8] {
        var bignum: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, name, &bignum) == 1, let bignum else {
            throw OpenSSL.failure("EVP_PKEY_get_bn_param(\(name))")
        }
        defer { BN_free(bignum) }
        return OpenSSL.bytes(of: bignum)
    }

    /// The private key as PKCS#8 PEM (`BEGIN PRIVATE KEY`), unencrypted.
    func pkcs8PEM() throws(JOSEError) -> String {
        try OpenSSL.writeBIO("PEM_write_bio_PrivateKey") { bio in
            PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
        }
    }

    /// The public key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
    func publicPEM() throws(JOSEError) -> String {
        try OpenSSL.writeBIO("PEM_write_bio_PUBKEY") { bio in
            PEM_write_bio_PUBKEY(bio, pointer)
        }
    }

    // MARK: - Signatures

    /// Signs `message` with SHA-256 (PKCS#1 v1.5 for RSA, DER ECDSA-Sig-Value for EC).
    func signSHA256(_ message: [UInt8]) throws(JOSEError) -> [UInt8] {
        let template = try signingContext()
        guard let context = EVP_MD_CTX_new() else { throw OpenSSL.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_MD_CTX_copy_ex(context, template) == 1 else { throw OpenSSL.failure("EVP_MD_CTX_copy_ex") }
        var length = 0
        let sized = message.withUnsafeBufferPointer { input in
            EVP_DigestSign(context, nil, &length, input.baseAddress, input.count)
        }
        guard sized == 1 else { throw OpenSSL.failure("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            EVP_DigestSign(context, &signature, &length, input.baseAddress, input.count)
        }
        guard signed == 1 else { throw OpenSSL.failure("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }

    /// The signing template, made on first use.
    private func signingContext() throws(JOSEError) -> OpaquePointer {
        let made = signingTemplate.withLock { template -> Result<OpaquePointer, JOSEError> in
            if let template { return .success(template) }
            guard let context = EVP_MD_CTX_new() else { return .failure(OpenSSL.failure("EVP_MD_CTX_new")) }
            guard EVP_DigestSignInit(context, nil, OpenSSL.sha256Digest, nil, pointer) == 1 else {
                EVP_MD_CTX_free(context)
                return .failure(OpenSSL.failure("EVP_DigestSignInit"))
            }
            template = context
            return .success(context)
        }
        return try made.get()
    }

    /// Whether `signature` (PKCS#1 v1.5 for RSA, DER for EC) is valid over `message` with SHA-256.
    func verifySHA256(signature: [UInt8], message: [UInt8]) -> Bool {
        defer { OpenSSL.clearErrors() }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, OpenSSL.sha256Digest, nil, pointer) == 1 else { return false }
        let status = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { input in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, input.baseAddress, input.count)
            }
        }
        return status == 1
    }
}
