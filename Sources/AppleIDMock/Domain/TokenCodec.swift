import JOSE

/// Apple-format opaque tokens that carry their own meaning under a MAC, so the mock stores
/// nothing per token and memory stays flat however many are issued (apple-reference.md §1.3).
///
/// Format: `<kind><32 hex>.0.<4 lower-case letters>.<22 base64url>`, e.g.
/// `rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow`. The hex is the payload
/// (consent id, client, issue time) masked with a keystream; the last part is a truncated
/// HMAC-SHA-256. A token dies when its consent does, or (access tokens) when it expires.
public struct TokenCodec: Sendable {
    /// What a token says.
    public struct Payload: Sendable, Equatable {
        /// `a` access token, `r` refresh token, `c` authorization code.
        public var kind: Character
        /// The consent it was issued under (0 for client-credentials tokens).
        public var consentID: UInt32
        /// Index of the client in the scenario's client list.
        public var clientIndex: UInt16
        /// Issue time, seconds since 1970.
        public var issuedAt: UInt32
    }

    private let secret: [UInt8]
    private let random: RandomSource

    /// A codec whose MAC key is `secret` (32 random bytes by default).
    public init(secret: [UInt8]? = nil, random: RandomSource = .system) {
        self.secret = secret ?? random.bytes(32)
        self.random = random
    }

    /// Makes a token for `payload`.
    public func encode(_ payload: Payload) -> String {
        let letters = random.string(4, alphabet: "abcdefghijklmnopqrstuvwxyz")
        var plain: [UInt8] = []
        plain += withUnsafeBytes(of: payload.consentID.bigEndian, Array.init)
        plain += withUnsafeBytes(of: payload.clientIndex.bigEndian, Array.init)
        plain += withUnsafeBytes(of: payload.issuedAt.bigEndian, Array.init)
        plain += random.bytes(6)
        let mask = keystream(kind: payload.kind, letters: letters)
        let hex = zip(plain, mask).map { String($0 ^ $1, radix: 16).leftPadded(to: 2) }.joined()
        let body = "\(payload.kind)\(hex).0.\(letters)"
        return body + "." + Base64URL.encode(HMACSHA256.mac(key: secret, message: Array(body.utf8)).prefix(16))
    }

    /// Reads a token this codec made; nil for anything else (wrong shape, forged, altered).
    public func decode(_ token: String) -> Payload? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count == 63, parts.count == 4, parts[1] == "0", parts[0].utf8.count == 33, parts[2].utf8.count == 4,
              parts[3].utf8.count == 22, let kind = parts[0].first, kind == "a" || kind == "r" || kind == "c",
              let tag = Base64URL.decode(parts[3]) else { return nil }
        let body = token.utf8.dropLast(23)
        guard HMACSHA256.equal(Array(HMACSHA256.mac(key: secret, message: Array(body)).prefix(16)), tag) else { return nil }
        let hex = Array(parts[0].utf8.dropFirst())
        var masked: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            masked.append(byte)
        }
        let plain = zip(masked, keystream(kind: kind, letters: String(parts[2]))).map { $0 ^ $1 }
        func number<T: FixedWidthInteger>(_ range: Range<Int>, _: T.Type) -> T {
            plain[range].reduce(T.zero) { $0 << 8 | T($1) }
        }
        return Payload(kind: kind, consentID: number(0..<4, UInt32.self), clientIndex: number(4..<6, UInt16.self),
                       issuedAt: number(6..<10, UInt32.self))
    }

    private func keystream(kind: Character, letters: String) -> [UInt8] {
        Array(HMACSHA256.mac(key: secret, message: Array("mask|\(kind)|\(letters)".utf8)).prefix(16))
    }
}
