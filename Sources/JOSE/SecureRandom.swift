import Synchronization

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`).
///
/// Small requests (ids, token noise) are served from a 4 KiB block drawn at once: each
/// `RAND_bytes` call costs microseconds of DRBG bookkeeping whatever its size, and a token
/// exchange asks for a few bytes several times. Bytes are handed out once and zeroed as taken.
public enum SecureRandom {
    private static let blockSize = 4096
    private static let pooledLimit = 64
    private static let pool = Mutex<(block: [UInt8], next: Int)>(([], blockSize))

    /// `count` random bytes; stops the process only if OpenSSL's CSPRNG fails.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0, count <= pooledLimit else { return OpenSSL.randomBytes(count) }
        return pool.withLock { pool in
            if pool.next + count > blockSize {
                pool.block = OpenSSL.randomBytes(blockSize)
                pool.next = 0
            }
            let range = pool.next..<pool.next + count
            pool.next += count
            defer { pool.block.replaceSubrange(range, with: repeatElement(0, count: count)) }
            return Array(pool.block[range])
        }
    }
}
