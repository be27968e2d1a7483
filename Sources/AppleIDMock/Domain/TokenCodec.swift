import JOSE

/// Apple-format opaque tokens that carry their own meaning under a MAC, so the mock stores
/// nothing per token and memory stays flat however many are issued (apple-reference.md §1.3).
///
/// Format: `<kind><32 hex>.0.<4 lower-case letters>.<22 base64url>`, e.g.
/// `rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow`. The hex is the payload —
/// consent id (4 bytes), the client's stable tag (6 bytes, from its client id: adding a client
/// to a scenario never re-targets a token), issue time (4 bytes), 2 random bytes — masked with a
/// keystream; the last part is a truncated HMAC-SHA-256. The MAC secret belongs to the state
/// owner and is replaced on reset, so no token survives a reset.
public struct TokenCodec: Sendable {
    /// What a token is.
    public enum Kind: Character, Sendable {
        /// `a`: access token.
        case access = "a"
        /// `r`: refresh token.
        case refresh = "r"
        /// `c`: authorization code.
        case code = "c"
    }

    /// What a token says.
    public struct Payload: Sendable, Equatable {
        /// Access, refresh or code.
        public var kind: Kind
        /// The consent it was issued under (0 for client-credentials tokens).
        public var consentID: UInt32
        /// The issuing client's tag (`ClientDirectory.tag(of:)`).
        public var clientTag: UInt64
        /// Issue time, seconds since 1970.
        public var issuedAt: Int64

        /// A payload.
        public init(kind: Kind, consentID: UInt32, clientTag: UInt64, issuedAt: Int64) {
            self.kind = kind
            self.consentID = consentID
            self.clientTag = clientTag
            self.issuedAt = issuedAt
        }
    }

    /// An issue time the format cannot carry (the clock keeps within `MockClock.representable`).
    public struct TimeOutOfRange: Error, Equatable, Sendable {
        /// The time that did not fit.
        public var issuedAt: Int64
    }

    private let secret: [UInt8]
    private let random: RandomSource

    /// A codec whose MAC key is `secret`.
    public init(secret: [UInt8], random: RandomSource = .system) {
        self.secret = secret
        self.random = random
    }

    /// Makes a token for `payload`.
    public func encode(_ payload: Payload) throws(TimeOutOfRange) -> String {
        guard let issuedAt = UInt32(exactly: payload.issuedAt) else { throw TimeOutOfRange(issuedAt: payload.issuedAt) }
        let letters = random.string(4, alphabet: "abcdefghijklmnopqrstuvwxyz")
        var plain: [UInt8] = []
        plain.reserveCapacity(16)
        plain += withUnsafeBytes(of: payload.consentID.bigEndian, Array.init)
        plain += withUnsafeBytes(of: payload.clientTag.bigEndian, Array.init).suffix(6)
        plain += withUnsafeBytes(of: issuedAt.bigEndian, Array.init)
        plain += random.bytes(2)
        let mask = keystream(kind: payload.kind.rawValue, letters: letters)
        let hex = zip(plain, mask).map { String($0 ^ $1, radix: 16).leftPadded(to: 2) }.joined()
        let body = "\(payload.kind.rawValue)\(hex).0.\(letters)"
        return body + "." + Base64URL.encode(HMACSHA256.mac(key: secret, message: Array(body.utf8)).prefix(16))
    }

    /// Reads a token this codec made; nil for anything else (wrong shape, forged, altered).
    public func decode(_ token: String) -> Payload? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count == 63, parts.count == 4, parts[1] == "0", parts[0].utf8.count == 33, parts[2].utf8.count == 4,
              parts[3].utf8.count == 22, let first = parts[0].first, let kind = Kind(rawValue: first),
              let tag = Base64URL.decode(parts[3]) else { return nil }
        let body = token.utf8.dropLast(23)
        guard HMACSHA256.equal(Array(HMACSHA256.mac(key: secret, message: Array(body)).prefix(16)), tag) else { return nil }
        let hex = Array(parts[0].utf8.dropFirst())
        var masked: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            masked.append(byte)
        }
        let plain = zip(masked, keystream(kind: kind.rawValue, letters: String(parts[2]))).map { $0 ^ $1 }
        func number(_ range: Range<Int>) -> UInt64 { plain[range].reduce(0) { $0 << 8 | UInt64($1) } }
        return Payload(kind: kind, consentID: UInt32(truncatingIfNeeded: number(0..<4)), clientTag: number(4..<10),
                       issuedAt: Int64(number(10..<14)))
    }

    private func keystream(kind: Character, letters: String) -> [UInt8] {
        Array(HMACSHA256.mac(key: secret, message: Array("mask|\(kind)|\(letters)".utf8)).prefix(16))
    }
}
