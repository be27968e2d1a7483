import MiniHTTP
import XCTest

final class HTTPFormTests: XCTestCase {
    private func decode(_ text: String) throws -> [String] {
        try HTTPForm(decoding: Array(text.utf8)).map { "\($0.name)=\($0.value)" }
    }

    func testDecoding_TurnsPlusIntoSpace() throws {
        XCTAssertEqual(try decode("q=a+b+%2B"), ["q=a b +"])
    }

    func testDecoding_UnescapesPercentXXInNamesAndValues_AnyHexCase() throws {
        XCTAssertEqual(try decode("%6e%61me=%E2%82%ac%e2%82%AC"), ["name=€€"])
    }

    func testDecoding_KeepsOrderAndDuplicates() throws {
        let form = try HTTPForm(decoding: Array("b=2&a=1&b=3".utf8))
        XCTAssertEqual(form.pairs.map(\.name), ["b", "a", "b"])
        XCTAssertEqual(form["b"], "2")
        XCTAssertEqual(form.values("b"), ["2", "3"])
        XCTAssertEqual(form.duplicatedNames, ["b"])
        XCTAssertNil(form["c"])
    }

    func testDuplicatedNames_ListsEachOnceInFirstSeenOrder() throws {
        let form = try HTTPForm(decoding: Array("x=1&y=1&x=2&y=2&x=3&z=1".utf8))
        XCTAssertEqual(form.duplicatedNames, ["x", "y"])
        XCTAssertEqual(try HTTPForm(decoding: Array("x=1&y=2".utf8)).duplicatedNames, [])
    }

    func testDecoding_SkipsEmptySegments_AndKeepsMissingValuesEmpty() throws {
        XCTAssertEqual(try decode("&a=1&&b&=c&"), ["a=1", "b=", "=c"])
        XCTAssertEqual(try decode(""), [])
    }

    func testDecoding_SplitsOnFirstEqualsOnly() throws {
        XCTAssertEqual(try decode("a=b=c"), ["a=b=c"])
        XCTAssertEqual(try HTTPForm(decoding: Array("a=b=c".utf8))["a"], "b=c")
    }

    func testDecoding_ThrowsBadPercentEscape_WithOffset() {
        for (text, offset) in [("a=%4", 2), ("a=%", 2), ("a=%zz", 2), ("ok=1&b%g1=2", 6), ("a=%4%41", 2)] {
            XCTAssertThrowsError(try HTTPForm(decoding: Array(text.utf8)), text) { error in
                XCTAssertEqual(error as? HTTPFormError, .badPercentEscape(offset: offset), text)
            }
        }
        XCTAssertEqual(try decode("a=%41"), ["a=A"])
    }

    func testDecoding_ThrowsInvalidUTF8_WhenEscapesDecodeToBadBytes() {
        for text in ["a=%FF", "a=%C3", "%80=1", "a=%ED%A0%80"] {
            XCTAssertThrowsError(try HTTPForm(decoding: Array(text.utf8)), text) { error in
                XCTAssertEqual(error as? HTTPFormError, .invalidUTF8, text)
            }
        }
        XCTAssertEqual(try decode("a=%C3%A9"), ["a=é"])
    }

    func testDecoding_ThrowsInvalidUTF8_WhenRawBytesAreNotUTF8() {
        XCTAssertThrowsError(try HTTPForm(decoding: [UInt8(ascii: "a"), UInt8(ascii: "="), 0xFF])) { error in
            XCTAssertEqual(error as? HTTPFormError, .invalidUTF8)
        }
    }

    func testEncode_EscapesAllButUnreserved_AndRoundTrips() throws {
        let pairs = [("redirect_uri", "https://a.example/cb?x=1&y=2"), ("name", "Zoë O'Neil ~*-._"), ("empty", "")]
        let encoded = HTTPForm.encode(pairs)
        XCTAssertEqual(encoded, "redirect_uri=https%3A%2F%2Fa.example%2Fcb%3Fx%3D1%26y%3D2&name=Zo%C3%AB+O%27Neil+%7E*-._&empty=")
        XCTAssertEqual(try HTTPForm(decoding: Array(encoded.utf8)), HTTPForm(pairs.map { (name: $0.0, value: $0.1) }))
    }

    func testPercentDecode_KeepsPlus_AndReturnsNilOnBadEscape() {
        XCTAssertEqual(HTTPForm.percentDecode("/a+b%20c%2F"), "/a+b c/")
        XCTAssertNil(HTTPForm.percentDecode("/a%2"))
        XCTAssertNil(HTTPForm.percentDecode("/a%FF"))
    }

    func testEquality_IsOrderSensitive() {
        XCTAssertEqual(HTTPForm([("a", "1"), ("b", "2")]), HTTPForm([("a", "1"), ("b", "2")]))
        XCTAssertNotEqual(HTTPForm([("a", "1"), ("b", "2")]), HTTPForm([("b", "2"), ("a", "1")]))
        XCTAssertNotEqual(HTTPForm([("a", "1")]), HTTPForm([("a", "1"), ("a", "1")]))
    }

    func testErrorDescription_NamesTheProblem() {
        XCTAssertEqual(HTTPFormError.badPercentEscape(offset: 3).description, "malformed percent-escape at byte 3")
        XCTAssertEqual(HTTPFormError.invalidUTF8.description, "decoded form data is not UTF-8")
    }

    // MARK: - Duplicate detection is linear (probe F4)

    func testDuplicatedNames_ListsEachNameOnce_InOrderOfItsSecondOccurrence() throws {
        let form = try HTTPForm(decoding: Array("b=1&a=1&a=2&c=1&b=2&a=3&c=2&d=1&c=3".utf8))
        XCTAssertEqual(form.duplicatedNames, ["a", "b", "c"])
        XCTAssertEqual(HTTPForm().duplicatedNames, [])
        XCTAssertEqual(HTTPForm([("x", "1"), ("x", "2"), ("x", "3")]).duplicatedNames, ["x"])
    }

    func testDuplicatedNames_HandlesEightyThousandNamesEachSentTwice() throws {
        // The probe's worst case near the 1 MiB body limit: with a scan of the names already
        // reported per pair this is 80,000 × 80,000 / 2 comparisons, with set lookups 160,000.
        let count = 80_000
        let body = (0..<count).map { index in
            let name = String(index, radix: 16)
            return "\(name)=&\(name)="
        }.joined(separator: "&")
        let form = try HTTPForm(decoding: Array(body.utf8))
        XCTAssertEqual(form.pairs.count, 2 * count)
        let duplicated = form.duplicatedNames
        XCTAssertEqual(duplicated.count, count)
        XCTAssertEqual(duplicated, (0..<count).map { String($0, radix: 16) })
    }
}
