import AppleIDMock
import XCTest

/// The opaque token format (`TokenCodec`): Apple's shape, a round trip for every kind and edge
/// value, and nil — never a trap — for anything altered, forged or malformed.
final class TokenCodecTests: XCTestCase {
    private let codec = TokenCodec(secret: Array(repeating: 7, count: 32))

    private var shape: Regex<Substring> { /^[acr][0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}$/ }

    func testRoundTripForEveryKindAndEdgeValue() throws {
        for kind in [TokenCodec.Kind.access, .refresh, .code] {
            for (consent, tag, time) in [(UInt32(0), UInt64(0), Int64(0)), (1, 0x0000_ffff_ffff_ffff, 1_700_000_000),
                                         (.max, 0x1234_5678_9abc, Int64(UInt32.max))] {
                let payload = TokenCodec.Payload(kind: kind, consentID: consent, clientTag: tag, issuedAt: time)
                let token = try codec.encode(payload)
                XCTAssertNotNil(token.wholeMatch(of: shape), token)
                XCTAssertEqual(token.first, kind.rawValue)
                XCTAssertEqual(codec.decode(token), payload)
            }
        }
    }

    func testTimesTheFormatCannotCarryAreRefusedNotClamped() {
        for time in [Int64(-1), Int64(UInt32.max) + 1] {
            XCTAssertThrowsError(try codec.encode(.init(kind: .access, consentID: 1, clientTag: 1, issuedAt: time))) { error in
                XCTAssertEqual((error as? TokenCodec.TimeOutOfRange)?.issuedAt, time)
            }
        }
    }

    func testEveryAlteredCharacterIsRefused() throws {
        let token = try codec.encode(.init(kind: .refresh, consentID: 42, clientTag: 99, issuedAt: 1_800_000_000))
        let bytes = Array(token.utf8)
        for index in bytes.indices {
            for replacement in ["0", "f", "a", "A", ".", "-", "z"].map({ UInt8(ascii: Unicode.Scalar($0)!) }) where replacement != bytes[index] {
                var altered = bytes
                altered[index] = replacement
                XCTAssertNil(codec.decode(String(decoding: altered, as: UTF8.self)), "position \(index) -> \(replacement)")
            }
        }
    }

    func testForeignSecretsShapesAndLengthsAreRefused() throws {
        let token = try codec.encode(.init(kind: .access, consentID: 1, clientTag: 2, issuedAt: 3))
        XCTAssertNil(TokenCodec(secret: Array(repeating: 8, count: 32)).decode(token))
        XCTAssertNotNil(codec.decode(token))
        for bad in ["", String(token.dropLast()), token + "A", token.uppercased(), String(repeating: "é", count: 32),
                    "x" + token.dropFirst(), String(repeating: ".", count: 63)] {
            XCTAssertNil(codec.decode(bad), bad)
        }
    }

    func testLettersNeverBiasedEvenWhenTheFirstDrawIsAllRejects() throws {
        // Every byte of the first draw is 255 (above the unbiased bound), so the letters come
        // from a second draw; the token is still well formed and reads back.
        let draws = DrawLog()
        let source = RandomSource { count in
            draws.count += 1
            return draws.count == 1 ? Array(repeating: 255, count: count) : (0..<count).map { UInt8($0 % 26) }
        }
        let skewed = TokenCodec(secret: [1, 2, 3], random: source)
        let payload = TokenCodec.Payload(kind: .code, consentID: 5, clientTag: 6, issuedAt: 7)
        let token = try skewed.encode(payload)
        XCTAssertNotNil(token.wholeMatch(of: shape), token)
        XCTAssertEqual(skewed.decode(token), payload)
        XCTAssertEqual(draws.count, 2)
    }
}

private final class DrawLog: @unchecked Sendable {
    var count = 0
}
