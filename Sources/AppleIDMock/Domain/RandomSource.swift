import JOSE

/// Where identifiers get their randomness; injectable so tests can make ids predictable.
public struct RandomSource: Sendable {
    private let fill: @Sendable (Int) -> [UInt8]

    /// A source producing `count` bytes per call.
    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) {
        fill = bytes
    }

    /// OpenSSL's CSPRNG.
    public static let system = RandomSource { SecureRandom.bytes($0) }

    /// `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] { fill(count) }

    /// `count` characters from `alphabet`, without modulo bias.
    public func string(_ count: Int, alphabet: String) -> String {
        let symbols = Array(alphabet.utf8)
        let limit = 256 - 256 % symbols.count
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            for byte in bytes(count * 2) where Int(byte) < limit && out.count < count {
                out.append(symbols[Int(byte) % symbols.count])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Letters and digits, as in Apple's key ids.
    public func alphanumeric(_ count: Int) -> String {
        string(count, alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    }

    /// Lower-case hex.
    public func hex(_ count: Int) -> String { string(count, alphabet: "0123456789abcdef") }
}
