import JOSE
import XCTest

/// Byte-exact JSON output: compact, pretty and sorted.
final class JSONWriterTests: XCTestCase {
    private func compactText(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.compact(value), as: UTF8.self)
    }

    /// Compact writes members in stored order.
    func testCompact_WritesMembersInStoredOrder() {
        let value: JSONValue = ["kid": "K1", "alg": "RS256", "n": [1, 2, ["x": nil]], "t": true, "f": false]
        XCTAssertEqual(compactText(value), "{\"kid\":\"K1\",\"alg\":\"RS256\",\"n\":[1,2,{\"x\":null}],\"t\":true,\"f\":false}")
        let swapped: JSONValue = ["alg": "RS256", "kid": "K1"]
        XCTAssertEqual(compactText(swapped), "{\"alg\":\"RS256\",\"kid\":\"K1\"}")
    }

    /// Compact escapes only quote backslash and controls.
    func testCompact_EscapesOnlyQuoteBackslashAndControls() {
        let value = JSONValue.string("a\"b\\c/d\u{00E9}\u{1F600}\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F}\u{2028}")
        XCTAssertEqual(compactText(value), "\"a\\\"b\\\\c/d\u{00E9}\u{1F600}\\n\\r\\t\\b\\f\\u0001\\u001f\u{7F}\u{2028}\"")
    }

    /// Compact escapes keys.
    func testCompact_EscapesKeys() {
        XCTAssertEqual(compactText(["a\"\n": 1]), "{\"a\\\"\\n\":1}")
    }

    /// Compact writes integers plainly.
    func testCompact_WritesIntegersPlainly() {
        XCTAssertEqual(compactText([0, -1, 1_795_266_301, .int(Int64.max), .int(Int64.min)]),
                       "[0,-1,1795266301,9223372036854775807,-9223372036854775808]")
    }

    /// Compact writes doubles in shortest round trip form.
    func testCompact_WritesDoublesInShortestRoundTripForm() {
        XCTAssertEqual(compactText([0.1, 1.0, 1e-7, 1e20, -0.0, 2.5, .double(1.0 / 3.0)]),
                       "[0.1,1.0,1e-07,1e+20,-0.0,2.5,0.3333333333333333]")
        XCTAssertEqual(compactText([.double(.infinity), .double(.nan)]), "[null,null]")
    }

    /// Compact writes empty containers.
    func testCompact_WritesEmptyContainers() {
        XCTAssertEqual(compactText(["a": [], "b": .object(JSONObject())]), "{\"a\":[],\"b\":{}}")
    }

    /// Pretty indents two spaces with newline at end.
    func testPretty_IndentsTwoSpacesWithNewlineAtEnd() {
        let value: JSONValue = ["keys": [["kty": "RSA", "e": "AQAB"]], "empty": [], "none": .object(JSONObject()), "n": 1]
        let expected = """
        {
          "keys": [
            {
              "kty": "RSA",
              "e": "AQAB"
            }
          ],
          "empty": [],
          "none": {},
          "n": 1
        }

        """
        XCTAssertEqual(JSONWriter.pretty(value), expected)
        XCTAssertEqual(JSONWriter.pretty("x"), "\"x\"\n")
    }

    /// Sorted compact sorts keys recursively by bytes.
    func testSortedCompact_SortsKeysRecursivelyByBytes() {
        let value: JSONValue = ["b": 1, "a": ["\u{00E9}": 1, "z": 2, "B": 3], "A": [["y": 1, "x": 2]]]
        XCTAssertEqual(
            String(decoding: JSONWriter.sortedCompact(value), as: UTF8.self),
            "{\"A\":[{\"x\":2,\"y\":1}],\"a\":{\"B\":3,\"z\":2,\"\u{00E9}\":1},\"b\":1}"
        )
        XCTAssertNotEqual(JSONWriter.sortedCompact(value), JSONWriter.compact(value))
    }

    /// Compact round trips through parser.
    func testCompact_RoundTripsThroughParser() throws {
        let value: JSONValue = [
            "s": "\u{0000}\u{1F600}\"\\", "i": .int(Int64.min), "d": 1e-300, "b": false, "n": nil,
            "a": [[], .object(JSONObject()), [["k": "v"]]],
        ]
        XCTAssertEqual(try JSONParser.parse(JSONWriter.compact(value)), value)
        XCTAssertEqual(try JSONParser.parse(JSONWriter.pretty(value)), value)
        XCTAssertNotEqual(try JSONParser.parse(JSONWriter.sortedCompact(value)), value)
    }

    /// Pretty reproduces Python json.dumps(indent=2) for the fixture JWKS.
    func testPretty_ReproducesPythonJSONDumpsIndent2_ForFixtureJWKS() throws {
        let text = try Fixture.text("jwks.json")
        XCTAssertEqual(JSONWriter.pretty(try JSONParser.parse(text)), text)
    }
}
