import JOSE
import XCTest

/// Cutting a document into members and elements without building them: each piece parses to
/// what the whole document holds there; every accepted shape has a broken twin that is refused.
final class JSONSlicesTests: XCTestCase {
    private func members(_ text: String) throws -> [(String, JSONValue)] {
        let bytes = Array(text.utf8)
        return try JSONSlices.members(bytes, in: try JSONSlices.document(bytes)).map { ($0.key, try JSONSlices.parse(bytes, $0.value)) }
    }

    private func elements(_ text: String) throws -> [JSONValue] {
        let bytes = Array(text.utf8)
        return try JSONSlices.elements(bytes, in: try JSONSlices.document(bytes)).map { try JSONSlices.parse(bytes, $0) }
    }

    func testMembers_AreEachValueAsTheWholeDocumentHoldsIt() throws {
        let text = #" { "a" : [1, {"x": "]}\"["}], "b\u00e9": "s,}", "c": -1.5e3, "d": {}, "e": [], "f": null } "#
        let whole = try XCTUnwrap(JSONParser.parse(text).objectValue)
        let cut = try members(text)
        XCTAssertEqual(cut.map(\.0), whole.keys)
        for (key, value) in cut { XCTAssertEqual(value, whole[key], key) }
        XCTAssertEqual(try members("{}").count, 0)
    }

    func testElements_AreEachValueAsTheWholeDocumentHoldsIt() throws {
        let text = #"[{"sequence": 1}, "a\\", [[]], 7, true]"#
        XCTAssertEqual(try elements(text), try XCTUnwrap(JSONParser.parse(text).arrayValue))
        XCTAssertEqual(try elements(" [ ] ").count, 0)
    }

    func testMembersAndElements_RefuseTheBrokenTwins() {
        let twins: [(accepted: String, rejected: String)] = [
            (#"{"a":1}"#, #"{"a":1,}"#),
            (#"{"a":1}"#, #"{"a" 1}"#),
            (#"{"a":1}"#, #"{a:1}"#),
            (#"{"a":1,"b":2}"#, #"{"a":1,"a":2}"#),
            (#"{"a":1,"b":2}"#, #"{"a":1 "b":2}"#),
            (#"{"a":[1]}"#, #"{"a":[1}"#),
            (#"{"a":"x"}"#, #"{"a":"x}"#),
            (#"{"a":{}}"#, #"{"a":{}}}"#),
            (#"{"a":1}"#, #"{"a":1} x"#),
        ]
        for (accepted, rejected) in twins {
            XCTAssertNoThrow(try members(accepted), accepted)
            assertThrows(try members(rejected), rejected)
        }
        for (accepted, rejected) in [("[1,2]", "[1,2,]"), ("[1,2]", "[1 2]"), ("[[1]]", "[[1]"), ("[\"]\"]", "[\"]\""), ("[1]", "[1]]")] {
            XCTAssertNoThrow(try elements(accepted), accepted)
            assertThrows(try elements(rejected), rejected)
        }
        assertThrows(try elements("{}"), "an object is no array")
        assertThrows(try members("[]"), "an array is no object")
        assertThrows(try members("   "), "nothing")
    }

    func testParse_NamesThePlaceInTheWholeDocument() throws {
        let bytes = Array("{\n  \"a\": 1,\n  \"b\": [1, 2x]\n}".utf8)
        let cut = try JSONSlices.members(bytes, in: try JSONSlices.document(bytes))
        assertThrows(try JSONSlices.parse(bytes, cut[1].value)) { error in
            XCTAssertEqual((error as? JSONParseError)?.line, 3)
        }
        // The twin: the first member parses.
        XCTAssertEqual(try JSONSlices.parse(bytes, cut[0].value), .int(1))
    }

    func testDeepNesting_IsCutWithoutRecursion() throws {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        XCTAssertEqual(try JSONSlices.elements(Array("[\(deep)]".utf8), in: 0..<(deep.utf8.count + 2)).count, 1)
        // Parsing the piece is JSONParser's, which refuses the depth.
        assertThrows(try elements("[\(deep)]"))
    }
}
