/// HMAC-SHA-256 (RFC 2104) built on `SHA256`, for MACs over the mock's opaque tokens.
public enum HMACSHA256 {
    /// A MAC key with its inner and outer padded blocks worked out once, for a key that MACs
    /// many messages (the token codec's secret).
    public struct Key: Sendable {
        private let innerPad: [UInt8]
        private let outerPad: [UInt8]

        /// Prepares `key` (hashed first when longer than SHA-256's 64-byte block).
        public init(_ key: [UInt8]) {
            var block = key.count > 64 ? SHA256.hash(key) : key
            block += [UInt8](repeating: 0, count: 64 - block.count)
            innerPad = block.map { $0 ^ 0x36 }
            outerPad = block.map { $0 ^ 0x5c }
        }

        /// The 32-byte MAC of `message`.
        public func mac(_ message: some Sequence<UInt8>) -> [UInt8] {
            var inner = innerPad
            inner.append(contentsOf: message)
            var outer = outerPad
            outer.append(contentsOf: SHA256.hash(inner))
            return SHA256.hash(outer)
        }
    }

    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: some Sequence<UInt8>) -> [UInt8] {
        Key(key).mac(message)
    }

    /// Compares two MACs in time independent of where they differ.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
