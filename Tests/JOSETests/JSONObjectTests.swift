import JOSE
import XCTest

/// Ordered JSON objects and `JSONValue` accessors, equality and literals.
final class JSONObjectTests: XCTestCase {
    /// Subscript appends new key and replaces existing in place.
    func testSubscript_AppendsNewKey_AndReplacesExistingInPlace() {
        var object = JSONObject()
        object["b"] = 1
        object["a"] = 2
        object["b"] = 3
        XCTAssertEqual(object.keys, ["b", "a"])
        XCTAssertEqual(object["b"], 3)
        XCTAssertNil(object["c"])
    }

    /// Subscript removes key when set to nil.
    func testSubscript_RemovesKey_WhenSetToNil() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = nil
        XCTAssertEqual(object.keys, ["a", "c"])
        XCTAssertEqual(object["c"], 3)
        XCTAssertNil(object["b"])
        object["b"] = 4
        XCTAssertEqual(object.keys, ["a", "c", "b"])
        object["zz"] = nil
        XCTAssertEqual(object.count, 3)
    }

    /// Subscript stores JSON null as a value.
    func testSubscript_StoresJSONNull_AsAValue() {
        var object = JSONObject()
        object["a"] = .null
        XCTAssertEqual(object["a"], .null)
        XCTAssertEqual(object.keys, ["a"])
    }

    /// Equality is order sensitive.
    func testEquality_IsOrderSensitive() {
        let ab: JSONObject = ["a": 1, "b": 2]
        XCTAssertEqual(ab, JSONObject([("a", 1), ("b", 2)]))
        XCTAssertNotEqual(ab, JSONObject([("b", 2), ("a", 1)]))
        XCTAssertNotEqual(ab, JSONObject([("a", 1), ("b", 3)]))
    }

    /// Init keeps first position and last value when pairs repeat key.
    func testInit_KeepsFirstPositionAndLastValue_WhenPairsRepeatKey() {
        let object = JSONObject([("a", 1), ("b", 2), ("a", 3)])
        XCTAssertEqual(object.keys, ["a", "b"])
        XCTAssertEqual(object["a"], 3)
    }

    /// Sequence iterates in order.
    func testSequence_IteratesInOrder() {
        let object: JSONObject = ["z": 1, "y": "2", "x": true]
        XCTAssertEqual(object.map(\.key), ["z", "y", "x"])
        XCTAssertEqual(object.map(\.value), [1, "2", true])
    }

    /// Keys distinguish canonically equivalent strings.
    func testKeys_DistinguishCanonicallyEquivalentStrings() {
        var object = JSONObject()
        object["\u{00E9}"] = 1
        object["e\u{0301}"] = 2
        XCTAssertEqual(object.count, 2)
        XCTAssertEqual(object["\u{00E9}"], 1)
        XCTAssertEqual(object["e\u{0301}"], 2)
    }

    /// JSONValue equality compares strings by bytes.
    func testLargeObject_FindsReplacesAndRemovesLikeASmallOne_AcrossItsIndex() {
        // 17 members is where lookups go through an index; both sides of it answer alike.
        for size in [3, 16, 17, 40] {
            var object = JSONObject((0..<size).map { ("k\($0)", JSONValue.int(Int64($0))) })
            object["k1"] = "one"
            object["k\(size / 2)"] = nil
            object["late"] = true
            var expected = (0..<size).map { "k\($0)" }
            expected.remove(at: size / 2)
            XCTAssertEqual(object.keys, expected + ["late"], "size \(size)")
            XCTAssertEqual(object["k1"], size / 2 == 1 ? nil : "one", "size \(size)")
            XCTAssertNil(object["k\(size / 2)"], "size \(size)")
            XCTAssertEqual(object["k\(size - 1)"], .int(Int64(size - 1)), "size \(size)")
            XCTAssertEqual(object["late"], true, "size \(size)")
            XCTAssertNil(object["absent"], "size \(size)")
            // Canonically equivalent spellings stay two keys, indexed or not.
            object["\u{E9}"] = 1
            object["e\u{301}"] = 2
            XCTAssertEqual(object["\u{E9}"], 1, "size \(size)")
            XCTAssertEqual(object["e\u{301}"], 2, "size \(size)")
        }
    }

    func testJSONValueEquality_ComparesStringsByBytes() {
        XCTAssertEqual(JSONValue.string("\u{00E9}"), .string("\u{00E9}"))
        XCTAssertNotEqual(JSONValue.string("\u{00E9}"), .string("e\u{0301}"))
        XCTAssertNotEqual(JSONValue.int(1), .double(1))
    }

    /// Accessors return value only for matching case.
    func testAccessors_ReturnValue_OnlyForMatchingCase() {
        let values: [JSONValue] = ["s", 7, 1.5, true, [1], ["k": 1], nil]
        XCTAssertEqual(values.map { $0.stringValue }, ["s", nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(values.map { $0.intValue }, [nil, 7, nil, nil, nil, nil, nil])
        XCTAssertEqual(values.map { $0.doubleValue }, [nil, 7, 1.5, nil, nil, nil, nil])
        XCTAssertEqual(values.map { $0.boolValue }, [nil, nil, nil, true, nil, nil, nil])
        XCTAssertEqual(values.map { $0.arrayValue }, [nil, nil, nil, nil, [1], nil, nil])
        XCTAssertEqual(values.map { $0.objectValue }, [nil, nil, nil, nil, nil, ["k": 1], nil])
        XCTAssertEqual(values.map(\.isNull), [false, false, false, false, false, false, true])
    }

    /// Literals build matching cases.
    func testLiterals_BuildMatchingCases() {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil]]
        let expected = JSONValue.object(JSONObject([
            ("a", .array([.int(1), .double(2.5), .string("x"), .bool(true), .null])),
        ]))
        XCTAssertEqual(value, expected)
        XCTAssertNotEqual(value, ["a": [1, 2.5, "x", false, nil]])
    }
}
