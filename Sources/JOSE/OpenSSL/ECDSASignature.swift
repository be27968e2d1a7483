import COpenSSL

/// Converts ECDSA signatures between OpenSSL's DER `ECDSA-Sig-Value` and JOSE's raw `r || s`.
enum ECDSASignature {
    /// The raw P-256 form: `r` then `s`, each left-padded to 32 bytes (RFC 7518 §3.4).
    static func raw(fromDER der: [UInt8]) throws(JOSEError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw OpenSSL.failure("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s else { throw OpenSSL.failure("ECDSA_SIG_get0") }
        var output = [UInt8](repeating: 0, count: 64)
        let written = output.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, 32), BN_bn2binpad(s, buffer.baseAddress! + 32, 32))
        }
        guard written.0 == 32, written.1 == 32 else { throw OpenSSL.failure("BN_bn2binpad") }
        return output
    }

    /// The DER form of a raw 64-byte `r || s`, or nil if `raw` is not exactly 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64 else { return nil }
        defer { OpenSSL.clearErrors() }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(raw, 32, nil) else { return nil }
        guard let s = raw.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + 32, 32, nil) }) else {
            BN_free(r)
            return nil
        }
        // ECDSA_SIG_set0 takes ownership of r and s on success only.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
