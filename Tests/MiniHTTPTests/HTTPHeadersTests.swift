import MiniHTTP
import XCTest

final class HTTPHeadersTests: XCTestCase {
    func testSubscript_LooksUpCaseInsensitively_ReturningFirst() {
        let headers: HTTPHeaders = ["Content-Type": "a", "content-type": "b"]
        XCTAssertEqual(headers["CONTENT-TYPE"], "a")
        XCTAssertEqual(headers.values("Content-type"), ["a", "b"])
        XCTAssertNil(headers["Content-Typ"])
        XCTAssertNil(headers["Content-Types"])
    }

    func testAdd_KeepsDuplicatesInOrder_WithSpellingAsGiven() {
        var headers = HTTPHeaders()
        headers.add("x-a", "1")
        headers.add("X-B", "2")
        headers.add("X-A", "3")
        XCTAssertEqual(headers.fields.map(\.name), ["x-a", "X-B", "X-A"])
        XCTAssertEqual(headers.fields.map(\.value), ["1", "2", "3"])
        XCTAssertEqual(headers.count, 3)
    }

    func testSet_ReplacesAllAtFirstPosition() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3", "C": "4"]
        headers.set("a", "9")
        XCTAssertEqual(headers.fields.map { "\($0.name)=\($0.value)" }, ["A=9", "B=2", "C=4"])
        headers.set("D", "5")
        XCTAssertEqual(headers.fields.map { "\($0.name)=\($0.value)" }, ["A=9", "B=2", "C=4", "D=5"])
    }

    func testRemove_DropsEveryMatch() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.remove("a")
        XCTAssertEqual(headers.fields.map(\.name), ["B"])
        headers.remove("missing")
        XCTAssertEqual(headers.count, 1)
    }

    func testContainsToken_SplitsCommasTrimsAndIgnoresCase() {
        let headers: HTTPHeaders = ["Connection": "Upgrade ,\tKeep-Alive", "connection": "x"]
        XCTAssertTrue(headers.contains("CONNECTION", token: "keep-alive"))
        XCTAssertTrue(headers.contains("Connection", token: "X"))
        XCTAssertFalse(headers.contains("Connection", token: "close"))
        XCTAssertFalse(headers.contains("Connection", token: "keep"))
        XCTAssertFalse(headers.contains("Missing", token: "x"))
    }

    func testEquality_IgnoresNameCaseButNotOrderOrValueCase() {
        XCTAssertEqual(["A": "1", "B": "2"] as HTTPHeaders, ["a": "1", "b": "2"] as HTTPHeaders)
        XCTAssertNotEqual(["A": "1", "B": "2"] as HTTPHeaders, ["B": "2", "A": "1"] as HTTPHeaders)
        XCTAssertNotEqual(["A": "x"] as HTTPHeaders, ["A": "X"] as HTTPHeaders)
        XCTAssertNotEqual(["A": "1"] as HTTPHeaders, ["A": "1", "A": "1"] as HTTPHeaders)
    }

    func testLookup_DoesNotFoldNonASCII() {
        let headers: HTTPHeaders = ["X-Ä": "1"]
        XCTAssertEqual(headers["X-Ä"], "1")
        XCTAssertNil(headers["X-ä"])
    }
}
