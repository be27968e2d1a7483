/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`).
public enum SecureRandom {
    /// `count` random bytes; stops the process only if OpenSSL's CSPRNG fails.
    public static func bytes(_ count: Int) -> [UInt8] {
        OpenSSL.randomBytes(count)
    }
}
