/// A deterministic byte stream: the same seed gives the same bytes in any process, on any
/// machine, in any later version that keeps the "v1" construction.
///
/// For tests and the mock's `--seed` runs only. Its bytes are as secret as its seed, which a
/// seeded run prints or takes on the command line; it is no replacement for `SecureRandom`
/// wherever an outsider must not predict the output.
///
/// Construction (v1): key = SHA-256("AppleIDMock seeded random v1" || seed), and block `i` of
/// the stream is HMAC-SHA-256(key, `i` as a big-endian UInt64), for i = 0, 1, 2, …
/// A value type: a copy is a snapshot that goes on from the same place.
public struct SeededRandom: Sendable {
    /// Hashed in front of every seed, so a stream's key is no other SHA-256 of the same bytes.
    private static let domain = Array("AppleIDMock seeded random v1".utf8)

    /// The stream's 32-byte key.
    private let key: [UInt8]
    /// `key` with HMAC's pads worked out once.
    private let blockMAC: HMACSHA256.Key
    /// The index of the next block to compute.
    private var nextBlock: UInt64 = 0
    /// The bytes of the current block not yet handed out.
    private var pending: ArraySlice<UInt8> = []

    /// The stream for a 64-bit seed: the same as `init(seed:)` with its 8 big-endian bytes.
    public init(seed: UInt64) {
        self.init(seed: Self.bigEndian(seed))
    }

    /// The stream for seed bytes of any length (the empty seed included).
    public init(seed: [UInt8]) {
        self.init(key: SHA256.hash(Self.domain + seed))
    }

    /// The stream for bytes drawn from a system CSPRNG (`SecureRandom.bytes(32)`), at least 16
    /// of them. The same stream as `init(seed:)` with those bytes, so a run that reports its
    /// entropy can be replayed.
    public init(entropy: [UInt8]) {
        precondition(entropy.count >= 16, "SeededRandom(entropy:) needs at least 16 bytes")
        self.init(seed: entropy)
    }

    /// Where a stream stands: its key, the next block to compute and the bytes of the current
    /// block not yet handed out. A stream restored from it goes on with the same bytes.
    public struct Position: Sendable, Equatable {
        /// The stream's 32-byte key.
        public var key: [UInt8]
        /// The index of the next block to compute.
        public var nextBlock: UInt64
        /// The bytes of the current block not yet handed out (at most a block, 32 bytes).
        public var pending: [UInt8]

        /// A position from its parts; `SeededRandom(position:)` checks them.
        public init(key: [UInt8], nextBlock: UInt64, pending: [UInt8]) {
            self.key = key
            self.nextBlock = nextBlock
            self.pending = pending
        }
    }

    /// Where this stream stands now.
    public var position: Position {
        Position(key: key, nextBlock: nextBlock, pending: Array(pending))
    }

    /// The stream at `position`; nil unless the key is 32 bytes, at most 32 bytes are pending
    /// and the next block is below 2^63 (no stream gets near it; beyond, counting blocks would
    /// soon overflow).
    public init?(position: Position) {
        guard position.key.count == 32, position.pending.count <= 32, position.nextBlock <= UInt64(Int64.max) else { return nil }
        self.init(key: position.key)
        nextBlock = position.nextBlock
        pending = ArraySlice(position.pending)
    }

    /// The stream keyed by `key` from its first block.
    private init(key: [UInt8]) {
        self.key = key
        self.blockMAC = HMACSHA256.Key(key)
    }

    /// The next `count` bytes. Consecutive calls hand out the same bytes as one call for their
    /// total: a partial block is kept for the next call.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "SeededRandom.bytes needs a count of 0 or more")
        var output: [UInt8] = []
        output.reserveCapacity(count)
        while output.count < count {
            if pending.isEmpty { pending = ArraySlice(nextBlockBytes()) }
            let taken = pending.prefix(count - output.count)
            output += taken
            pending = pending.dropFirst(taken.count)
        }
        return output
    }

    /// An independent stream for `label`, keyed by SHA-256(key || label as UTF-8) and starting at
    /// its own first block. Does not advance this stream: the same label always gives the same
    /// stream, wherever this one stands.
    public func derived(_ label: String) -> SeededRandom {
        SeededRandom(key: SHA256.hash(key + Array(label.utf8)))
    }

    /// HMAC-SHA-256(key, nextBlock as a big-endian UInt64), then moves on a block.
    private mutating func nextBlockBytes() -> [UInt8] {
        let block = blockMAC.mac(Self.bigEndian(nextBlock))
        nextBlock += 1
        return block
    }

    /// The 8 big-endian bytes of `value`.
    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
