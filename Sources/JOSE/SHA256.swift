/// SHA-256 (FIPS 180-4) through OpenSSL.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        if let array = bytes as? [UInt8] { return OpenSSL.sha256(array) }
        return OpenSSL.sha256(Array(bytes))
    }
}
