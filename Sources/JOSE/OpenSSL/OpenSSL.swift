import COpenSSL

/// The choke point for OpenSSL's error queue, digests, randomness and memory BIOs.
///
/// OpenSSL's error queue is thread-local: read it (with `failure` or `clearErrors`) right
/// where a call failed, before anything else can run on this thread.
enum OpenSSL {
    /// Drains the error queue into a readable reason, oldest error first.
    static func drainErrors() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let end = buffer.firstIndex(of: 0) ?? buffer.count
            reasons.append(String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? "no error reported" : reasons.joined(separator: "; ")
    }

    /// Discards whatever is on the error queue (after a failure that is an answer, not an error).
    static func clearErrors() {
        ERR_clear_error()
    }

    /// A `JOSEError.openSSL` naming `call`, with the queue drained into its reason.
    static func failure(_ call: String) -> JOSEError {
        .openSSL(call: call, reason: drainErrors())
    }

    /// SHA-256 fetched from the default provider once. Passing `EVP_sha256()` instead makes
    /// OpenSSL 3 look the implementation up by name on every call (a locked store lookup).
    static var sha256Digest: OpaquePointer { FetchedDigest.sha256.pointer }

    /// SHA-256 of `bytes` through `EVP_Digest` (one fresh digest context inside).
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, sha256Digest, nil)
        }
        guard status == 1, length == 32 else {
            // Only reachable if libcrypto itself is broken (no SHA-256 provider).
            fatalError("EVP_Digest(SHA-256) failed: \(drainErrors())")
        }
        return Array(digest.prefix(32))
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    static func randomBytes(_ count: Int) -> [UInt8] {
        precondition((0...Int(Int32.max)).contains(count), "byte count out of range")
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            // A CSPRNG failure leaves no safe way to continue.
            fatalError("RAND_bytes failed: \(drainErrors())")
        }
        return bytes
    }

    /// Runs `body` with a memory BIO holding a copy of `text`'s UTF-8 bytes.
    static func withReadBIO<T>(
        _ text: String,
        _ body: (OpaquePointer) throws(JOSEError) -> T
    ) throws(JOSEError) -> T {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        let bytes = Array(text.utf8)
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32(clamping: $0.count)) }
            guard written == Int32(clamping: bytes.count) else { throw failure("BIO_write") }
        }
        return try body(bio)
    }

    /// Runs `write` against a fresh memory BIO and returns what it wrote as text.
    static func writeBIO(
        _ call: String,
        _ write: (OpaquePointer) -> Int32
    ) throws(JOSEError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure(call) }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { throw failure("BIO_get_mem_data") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    /// A NUL-terminated C string with static lifetime, for OpenSSL calls that keep the pointer
    /// (`OSSL_PARAM_BLD_push_*`, `EVP_PKEY_CTX_new_from_name`).
    static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// The big-endian bytes of `bignum`, without leading zeros (empty for zero).
    static func bytes(of bignum: OpaquePointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(shim_BN_num_bytes(bignum)))
        let written = BN_bn2bin(bignum, &output)
        return Array(output.prefix(Int(written)))
    }
}
