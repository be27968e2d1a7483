/// HMAC-SHA-256 (RFC 2104) built on `SHA256`, for MACs over the mock's opaque tokens.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: some Sequence<UInt8>) -> [UInt8] {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + Array(message))
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }

    /// Compares two MACs in time independent of where they differ.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
