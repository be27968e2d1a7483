import JOSE
import XCTest

/// Strict RFC 8259 parsing: accept/reject twins, numbers, strings, depth, positions.
final class JSONParserTests: XCTestCase {
    /// Each accepted document paired with a near twin that must be rejected.
    private let twins: [(accepted: String, rejected: String)] = [
        ("[1,2]", "[1,2,]"),
        ("{\"a\":1}", "{\"a\":1,}"),
        ("{\"a\":1,\"b\":2}", "{\"a\":1,\"a\":2}"),
        ("{\"\u{00E9}\":1}", "{\"\u{00E9}\":1,\"\\u00e9\":2}"),
        ("{\"a\":1}", "{a:1}"),
        ("{\"a\":1}", "{\"a\" 1}"),
        ("{\"a\":1}", "{'a':1}"),
        ("0", "01"),
        ("-0", "-01"),
        ("-0.5", "-.5"),
        ("0.5", "0."),
        ("1.5e3", "1.5e"),
        ("1E+2", "1E+"),
        ("1e308", "1e309"),
        ("-1e308", "-1e309"),
        ("12", "+12"),
        ("\"a\\u00e9\"", "\"a\\u00g9\""),
        ("\"\\ud83d\\ude00\"", "\"\\ud83d\""),
        ("\"\\ud83d\\ude00\"", "\"\\ude00\\ud83d\""),
        ("\"\\ud83d\\ude00\"", "\"\\ud83d\\u0041\""),
        ("\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\\x\""),
        ("\"tab\\t\"", "\"tab\t\""),
        ("\"nl\\n\"", "\"nl\n\""),
        ("true", "tru"),
        ("false", "False"),
        ("null", "nul"),
        ("null", "NaN"),
        ("1", "Infinity"),
        (" [ ] ", "[] x"),
        ("[1]", "[1]//c"),
        ("[1]", "/*c*/[1]"),
        ("[1]", "[1]]"),
        ("[[1]]", "[[1]"),
        ("\"a\"", "\"a"),
        ("\"a\"", "'a'"),
        ("[1,2]", "[1 2]"),
        ("{}", "{,}"),
        ("[]", "[,]"),
        ("\r\n\t 7 \r\n\t", "\u{000B}7"),
        ("\"ok\"", "\u{FEFF}\"ok\""),
        ("[null]", ""),
        ("[null]", "   "),
    ]

    /// Parse accepts valid document and rejects tampered twin.
    func testParse_AcceptsValidDocument_AndRejectsTamperedTwin() {
        for (accepted, rejected) in twins {
            XCTAssertNoThrow(try JSONParser.parse(accepted), accepted)
            assertThrows(try JSONParser.parse(rejected), rejected)
        }
    }

    /// Byte sequences that are not UTF-8, each paired with a valid twin.
    func testParse_RejectsInvalidUTF8_AndAcceptsValidTwin() {
        let quote = UInt8(ascii: "\"")
        let cases: [(valid: [UInt8], invalid: [UInt8])] = [
            ([0xC3, 0xA9], [0xC3]),                         // truncated
            ([0xC3, 0xA9], [0xC3, 0x41]),                   // bad continuation
            ([0x2F], [0xC0, 0xAF]),                         // overlong '/'
            ([0xE0, 0xA0, 0x80], [0xE0, 0x80, 0x80]),       // overlong 3-byte
            ([0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80]),       // encoded surrogate
            ([0xF0, 0x9F, 0x98, 0x80], [0xF0, 0x8F, 0xBF, 0xBF]), // overlong 4-byte
            ([0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80]), // above U+10FFFF
            ([0x41], [0xFF]),
            ([0x41], [0x80]),
        ]
        for (valid, invalid) in cases {
            let good = try? JSONParser.parse([quote] + valid + [quote])
            XCTAssertEqual(good, .string(String(decoding: valid, as: UTF8.self)), "\(valid)")
            assertThrows(try JSONParser.parse([quote] + invalid + [quote]), "\(invalid)")
        }
    }

    /// Parse reads numbers as int when integral and in range.
    func testParse_ReadsNumbers_AsIntWhenIntegralAndInRange() throws {
        XCTAssertEqual(try JSONParser.parse("9223372036854775807"), .int(Int64.max))
        XCTAssertEqual(try JSONParser.parse("-9223372036854775808"), .int(Int64.min))
        XCTAssertEqual(try JSONParser.parse("9223372036854775808"), .double(9223372036854775808))
        XCTAssertEqual(try JSONParser.parse("-9223372036854775809"), .double(-9223372036854775808.0))
        XCTAssertEqual(try JSONParser.parse("0"), .int(0))
        XCTAssertEqual(try JSONParser.parse("-0"), .int(0))
        XCTAssertEqual(try JSONParser.parse("1.0"), .double(1))
        XCTAssertEqual(try JSONParser.parse("1E2"), .double(100))
        XCTAssertEqual(try JSONParser.parse("-2.5e-3"), .double(-0.0025))
        XCTAssertEqual(try JSONParser.parse("1e-400"), .double(0))
    }

    /// Parse reads strings with escapes and surrogate pairs.
    func testParse_ReadsStrings_WithEscapesAndSurrogatePairs() throws {
        XCTAssertEqual(try JSONParser.parse("\"\\ud83d\\ude00\""), .string("\u{1F600}"))
        XCTAssertEqual(try JSONParser.parse("\"\\u00E9\\u0000\""), .string("\u{00E9}\u{0000}"))
        XCTAssertEqual(try JSONParser.parse("\"a\\/b\""), .string("a/b"))
        XCTAssertEqual(try JSONParser.parse("\"\\b\\f\\n\\r\\t\""), .string("\u{08}\u{0C}\n\r\t"))
    }

    /// Parse keeps object order.
    func testParse_KeepsObjectOrder() throws {
        let value = try JSONParser.parse("{\"z\":1,\"a\":[true,false,null],\"m\":{\"y\":\"x\",\"b\":2.5}}")
        XCTAssertEqual(value.objectValue?.keys, ["z", "a", "m"])
        XCTAssertEqual(value.objectValue?["m"]?.objectValue?.keys, ["y", "b"])
        XCTAssertEqual(value.objectValue?["a"], [true, false, nil])
    }

    /// Parse treats canonically equivalent keys as distinct.
    func testParse_TreatsCanonicallyEquivalentKeysAsDistinct() throws {
        // U+00E9 and e + U+0301 are different code points (RFC 8259 §8.3 compares code units).
        let value = try JSONParser.parse("{\"\u{00E9}\":1,\"e\u{0301}\":2}")
        XCTAssertEqual(value.objectValue?.count, 2)
        assertThrows(try JSONParser.parse("{\"\u{00E9}\":1,\"\u{00E9}\":2}"))
    }

    /// Parse accepts max depth and rejects one deeper.
    func testParse_AcceptsMaxDepth_AndRejectsOneDeeper() {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        XCTAssertNoThrow(try JSONParser.parse(deepest))
        assertThrows(try JSONParser.parse(tooDeep)) { error in
            XCTAssertEqual((error as? JSONParseError)?.message, "nesting deeper than 64 levels")
        }
    }

    /// Parse honours custom max depth.
    func testParse_HonoursCustomMaxDepth() {
        XCTAssertNoThrow(try JSONParser.parse("{\"a\":[1]}", maxDepth: 2))
        assertThrows(try JSONParser.parse("{\"a\":[1]}", maxDepth: 1))
        XCTAssertNoThrow(try JSONParser.parse("1", maxDepth: 0))
        assertThrows(try JSONParser.parse("[]", maxDepth: 0))
    }

    /// Parse rejects huge nesting without crashing.
    func testParse_RejectsHugeNesting_WithoutCrashing() {
        let bytes = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        assertThrows(try JSONParser.parse(bytes))
        let objects = String(repeating: "{\"a\":", count: 100_000)
        assertThrows(try JSONParser.parse(objects, maxDepth: 1_000_000))
    }

    /// Parse reports line and column.
    func testParse_ReportsLineAndColumn() {
        let text = "{\n  \"a\": 1\n  \"b\": 2\n}"
        assertThrows(try JSONParser.parse(text)) { error in
            let parseError = error as? JSONParseError
            XCTAssertEqual(parseError, JSONParseError(offset: 13, line: 3, column: 3, message: "expected ',' or '}'"))
            XCTAssertEqual(parseError?.description, "line 3, column 3: expected ',' or '}'")
        }
    }

    /// Parse reports duplicate key at the key.
    func testParse_ReportsDuplicateKeyAtTheKey() {
        assertThrows(try JSONParser.parse("{\"a\":1,\"a\":2}")) { error in
            XCTAssertEqual((error as? JSONParseError)?.offset, 7)
            XCTAssertEqual((error as? JSONParseError)?.message, "duplicate key \"a\"")
        }
    }

    /// Parse accepts any byte collection.
    func testParse_AcceptsAnyByteCollection() throws {
        let bytes = Array("xx[1]xx".utf8)
        XCTAssertEqual(try JSONParser.parse(bytes[2..<5]), [1])
        assertThrows(try JSONParser.parse(bytes[2..<6]))
    }

    /// Parse never crashes and round trips when input is mutated.
    func testParse_NeverCrashes_AndRoundTrips_WhenInputIsMutated() {
        // A small deterministic mutation fuzz: whatever parses must survive write + re-parse.
        let seed: [UInt8] = Array("{\"a\":[1,-2.5e3,\"x\\u00e9\\n\",true,null,{\"b\":{}}],\"c\":\"\u{1F600}\"}".utf8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let alphabet = Array("{}[]\",:\\-+.0123456789eEtrufalsn u\u{00E9}".utf8) + [0x00, 0xFF, 0xC3, 0x0A]
        var parsedCount = 0
        for _ in 0..<5000 {
            var input = seed
            for _ in 0..<Int(next() % 4 + 1) {
                let position = Int(next() % UInt64(input.count))
                switch next() % 3 {
                case 0: input[position] = alphabet[Int(next() % UInt64(alphabet.count))]
                case 1: input.remove(at: position)
                default: input.insert(alphabet[Int(next() % UInt64(alphabet.count))], at: position)
                }
            }
            guard let value = try? JSONParser.parse(input) else { continue }
            parsedCount += 1
            XCTAssertEqual(try? JSONParser.parse(JSONWriter.compact(value)), value)
        }
        XCTAssertGreaterThan(parsedCount, 0)
    }
}
