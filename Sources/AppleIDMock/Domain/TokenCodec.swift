import JOSE

/// Apple-format opaque tokens that carry their own meaning under a MAC, so the mock stores
/// nothing per token and memory stays flat however many are issued (apple-behaviour.md §1.3).
///
/// Format: `<kind><32 hex>.0.<4 lower-case letters>.<22 base64url>`, e.g.
/// `rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow`. The hex is the payload —
/// consent id (4 bytes), the client's stable tag (6 bytes, from its client id: adding a client
/// to a scenario never re-targets a token), issue time (4 bytes), 2 random bytes — masked with a
/// keystream; the last part is a truncated HMAC-SHA-256. The MAC secret belongs to the state
/// owner and is replaced on reset, so no token survives a reset.
package struct TokenCodec: Sendable {
    /// What a token is.
    package enum Kind: Character, Sendable {
        /// `a`: access token.
        case access = "a"
        /// `r`: refresh token.
        case refresh = "r"
        /// `c`: authorization code.
        case code = "c"
    }

    /// What a token says.
    package struct Payload: Sendable, Equatable {
        /// Access, refresh or code.
        package var kind: Kind
        /// The consent it was issued under (0 for client-credentials tokens).
        var consentID: UInt32
        /// The issuing client's tag (`ClientDirectory.tag(of:)`).
        var clientTag: UInt64
        /// Issue time, seconds since 1970.
        package var issuedAt: Int64

        /// A payload.
        package init(kind: Kind, consentID: UInt32, clientTag: UInt64, issuedAt: Int64) {
            self.kind = kind
            self.consentID = consentID
            self.clientTag = clientTag
            self.issuedAt = issuedAt
        }
    }

    /// An issue time the format cannot carry (the clock keeps within `MockClock.representable`).
    package struct TimeOutOfRange: Error, Equatable, Sendable {
        /// The time that did not fit.
        package var issuedAt: Int64
    }

    private let key: HMACSHA256.Key
    private let random: RandomSource

    /// A codec whose MAC key is `secret`.
    package init(secret: [UInt8], random: RandomSource = .system) {
        key = HMACSHA256.Key(secret)
        self.random = random
    }

    /// A MAC that tells two codecs' secrets apart without showing them.
    var fingerprint: [UInt8] { key.mac(Array("fingerprint".utf8)) }

    private static let length = 63
    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let letterAlphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)

    /// Makes a token for `payload`, drawing from the codec's own source.
    package func encode(_ payload: Payload) throws(TimeOutOfRange) -> String {
        var random = random
        return try encode(payload, random: &random)
    }

    /// Makes a token for `payload`, drawing its random part from `random`.
    package func encode(_ payload: Payload, random: inout RandomSource) throws(TimeOutOfRange) -> String {
        guard let issuedAt = UInt32(exactly: payload.issuedAt) else { throw TimeOutOfRange(issuedAt: payload.issuedAt) }
        // One draw: 8 candidate bytes for the 4 letters (a byte below 234 maps to a letter without
        // modulo bias), 2 bytes of noise in the payload.
        let noise = random.bytes(10)
        var letters = noise[0..<8].filter { $0 < 234 }.prefix(4).map { Self.letterAlphabet[Int($0 % 26)] }
        if letters.count < 4 { letters = Array(random.string(4, alphabet: "abcdefghijklmnopqrstuvwxyz").utf8) }
        var plain: [UInt8] = []
        plain.reserveCapacity(16)
        plain += withUnsafeBytes(of: payload.consentID.bigEndian, Array.init)
        plain += withUnsafeBytes(of: payload.clientTag.bigEndian, Array.init).suffix(6)
        plain += withUnsafeBytes(of: issuedAt.bigEndian, Array.init)
        plain += noise[8..<10]
        let mask = keystream(kind: payload.kind, letters: letters)
        var token: [UInt8] = []
        token.reserveCapacity(Self.length)
        token.append(payload.kind.byte)
        for index in 0..<16 {
            let byte = plain[index] ^ mask[index]
            token.append(Self.hexDigits[Int(byte >> 4)])
            token.append(Self.hexDigits[Int(byte & 0x0f)])
        }
        token += ".0.".utf8
        token += letters
        let tag = key.mac(token).prefix(16)
        token.append(UInt8(ascii: "."))
        token += Base64URL.encode(tag).utf8
        return String(decoding: token, as: UTF8.self)
    }

    /// Reads a token this codec made; nil for anything else (wrong shape, forged, altered).
    package func decode(_ token: String) -> Payload? {
        let bytes = Array(token.utf8)
        // <kind><32 hex>.0.<4 letters>.<22 base64url>
        guard bytes.count == Self.length, bytes[33] == UInt8(ascii: "."), bytes[34] == UInt8(ascii: "0"),
              bytes[35] == UInt8(ascii: "."), bytes[40] == UInt8(ascii: "."),
              let kind = Kind(byte: bytes[0]),
              let tag = Base64URL.decode(String(decoding: bytes[41...], as: UTF8.self)), tag.count == 16 else { return nil }
        guard HMACSHA256.equal(Array(key.mac(bytes[0..<40]).prefix(16)), tag) else { return nil }
        let mask = keystream(kind: kind, letters: bytes[36..<40])
        var plain: [UInt8] = []
        plain.reserveCapacity(16)
        for index in 0..<16 {
            guard let high = Self.hexValue(bytes[1 + 2 * index]), let low = Self.hexValue(bytes[2 + 2 * index]) else { return nil }
            plain.append((high << 4 | low) ^ mask[index])
        }
        func number(_ range: Range<Int>) -> UInt64 { plain[range].reduce(0) { $0 << 8 | UInt64($1) } }
        return Payload(kind: kind, consentID: UInt32(truncatingIfNeeded: number(0..<4)), clientTag: number(4..<10),
                       issuedAt: Int64(number(10..<14)))
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private func keystream(kind: Kind, letters: some Collection<UInt8>) -> [UInt8] {
        var message = Array("mask|".utf8)
        message.append(kind.byte)
        message.append(UInt8(ascii: "|"))
        message += letters
        return Array(key.mac(message).prefix(16))
    }
}

extension TokenCodec.Kind {
    /// The kind's letter as an ASCII byte.
    var byte: UInt8 { rawValue.asciiValue ?? UInt8(ascii: "?") }

    /// The kind a token's first byte names.
    init?(byte: UInt8) {
        guard byte < 0x80, let kind = Self(rawValue: Character(Unicode.Scalar(byte))) else { return nil }
        self = kind
    }
}
