import JOSE
import XCTest

/// RFC 4648 / RFC 7515 base64url vectors and strict decoding.
final class Base64URLTests: XCTestCase {
    /// RFC 4648 §10 vectors (padding removed).
    private let rfc4648 = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
        ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ]

    /// Encode matches RFC 4648 vectors.
    func testEncode_MatchesRFC4648Vectors() {
        for (plain, encoded) in rfc4648 {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), encoded, plain)
        }
    }

    /// Decode matches RFC 4648 vectors.
    func testDecode_MatchesRFC4648Vectors() {
        for (plain, encoded) in rfc4648 {
            XCTAssertEqual(Base64URL.decode(encoded), Array(plain.utf8), encoded)
        }
    }

    /// Encode matches RFC 7515 examples.
    func testEncode_MatchesRFC7515Examples() {
        // RFC 7515 Appendix C.
        XCTAssertEqual(Base64URL.encode([3, 236, 255, 224, 193]), "A-z_4ME")
        // RFC 7515 Appendix A.1 header and payload.
        XCTAssertEqual(
            Base64URL.encode(Array("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8)),
            "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        )
        XCTAssertEqual(
            Base64URL.encode(Array("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8)),
            "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        )
    }

    /// Decode accepts URL alphabet and rejects standard alphabet.
    func testDecode_AcceptsURLAlphabet_AndRejectsStandardAlphabet() {
        XCTAssertEqual(Base64URL.decode("A-z_4ME"), [3, 236, 255, 224, 193])
        XCTAssertNil(Base64URL.decode("A+z/4ME"))
    }

    /// Decode rejects padding.
    func testDecode_RejectsPadding() {
        XCTAssertEqual(Base64URL.decode("Zg"), [0x66])
        XCTAssertNil(Base64URL.decode("Zg=="))
        XCTAssertNil(Base64URL.decode("Zm8="))
    }

    /// Decode rejects whitespace.
    func testDecode_RejectsWhitespace() {
        XCTAssertEqual(Base64URL.decode("Zm9vYmFy"), Array("foobar".utf8))
        XCTAssertNil(Base64URL.decode("Zm9v YmFy"))
        XCTAssertNil(Base64URL.decode("Zm9vYmFy\n"))
        XCTAssertNil(Base64URL.decode("\tZm9vYmFy"))
    }

    /// Decode rejects impossible length.
    func testDecode_RejectsImpossibleLength() {
        XCTAssertEqual(Base64URL.decode("Zm9vYg"), Array("foob".utf8))
        XCTAssertNil(Base64URL.decode("Zm9vY"))
        XCTAssertNil(Base64URL.decode("Z"))
    }

    /// Decode rejects non zero trailing bits.
    func testDecode_RejectsNonZeroTrailingBits() {
        XCTAssertEqual(Base64URL.decode("Zg"), [0x66])
        XCTAssertNil(Base64URL.decode("Zh"))
        XCTAssertEqual(Base64URL.decode("Zm8"), [0x66, 0x6F])
        XCTAssertNil(Base64URL.decode("Zm9"))
    }

    /// Decode rejects non ASCII.
    func testDecode_RejectsNonASCII() {
        XCTAssertEqual(Base64URL.decode("Zm9v"), Array("foo".utf8))
        XCTAssertNil(Base64URL.decode("Zm9\u{00E9}"))
    }

    /// Decode accepts substring.
    func testDecode_AcceptsSubstring() {
        let token = "aaa.Zm9v.bbb"
        let middle = token.split(separator: ".")[1]
        XCTAssertEqual(Base64URL.decode(middle), Array("foo".utf8))
    }

    /// Round trip of all byte values and lengths.
    func testRoundTrip_AllByteValuesAndLengths() {
        let all = (0...255).map { UInt8($0) }
        for length in 0...all.count {
            let bytes = Array(all.prefix(length).reversed())
            let encoded = Base64URL.encode(bytes)
            XCTAssertFalse(encoded.contains("="))
            XCTAssertEqual(Base64URL.decode(encoded), bytes, "length \(length)")
        }
    }
}
