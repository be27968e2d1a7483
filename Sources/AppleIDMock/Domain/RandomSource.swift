import JOSE

/// Where identifiers get their randomness. A value: the state owner keeps one in its world and
/// advances it only inside operations that succeed, so draws happen in the order operations run
/// and no OpenSSL refill happens under the state lock (the stream is HMAC-SHA-256 over a counter,
/// seeded once from system entropy, or from `--seed` for runs that repeat byte for byte).
package struct RandomSource: Sendable {
    private enum Kind: Sendable {
        /// A fresh stream from system entropy per use (`system` before the state owner resolves it).
        case entropy
        /// A deterministic stream.
        case stream(SeededRandom)
        /// A caller's function (tests that need predictable or colliding draws).
        case custom(@Sendable (Int) -> [UInt8])
    }

    private var kind: Kind

    /// A source producing `count` bytes per call of `bytes`: for tests; it runs wherever draws
    /// happen, inside the state lock too.
    package init(bytes: @escaping @Sendable (Int) -> [UInt8]) {
        kind = .custom(bytes)
    }

    /// System randomness: a stream seeded from OpenSSL's CSPRNG where the state owner is made.
    package static let system = RandomSource(kind: .entropy)

    /// The same stream every time for `seed` (`serve --seed`).
    package static func seeded(_ seed: UInt64) -> RandomSource { RandomSource(kind: .stream(SeededRandom(seed: seed))) }

    /// A source drawing from `stream`.
    init(stream: SeededRandom) {
        kind = .stream(stream)
    }

    /// A stream going on from `position`; nil when the position is malformed (`SeededRandom(position:)`).
    init?(position: SeededRandom.Position) {
        guard let stream = SeededRandom(position: position) else { return nil }
        kind = .stream(stream)
    }

    /// Where the stream stands, to be stored and restored; nil unless this source is a stream.
    var streamPosition: SeededRandom.Position? {
        guard case .stream(let stream) = kind else { return nil }
        return stream.position
    }

    private init(kind: Kind) {
        self.kind = kind
    }

    /// This source ready to be kept and advanced: `system` becomes a stream seeded now from
    /// OpenSSL (call it outside any lock); the others are returned as they are.
    func resolved() -> RandomSource {
        guard case .entropy = kind else { return self }
        return RandomSource(kind: .stream(SeededRandom(entropy: SecureRandom.bytes(32))))
    }

    /// The seeded stream for `label`, independent of this one's draws: nil unless seeded by `seed`.
    func derived(_ label: String) -> SeededRandom? {
        guard case .stream(let stream) = kind else { return nil }
        return stream.derived(label)
    }

    /// `count` random bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        switch kind {
        case .entropy: return SecureRandom.bytes(count)
        case .stream(var stream):
            let bytes = stream.bytes(count)
            kind = .stream(stream)
            return bytes
        case .custom(let fill): return fill(count)
        }
    }

    /// `count` characters from `alphabet`, without modulo bias.
    package mutating func string(_ count: Int, alphabet: String) -> String {
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
    mutating func alphanumeric(_ count: Int) -> String {
        string(count, alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    }

    /// Lower-case hex.
    mutating func hex(_ count: Int) -> String { string(count, alphabet: "0123456789abcdef") }
}
