@testable import MiniHTTP
import XCTest

/// The client's answer reader, bytes in and a response out (house style rule 12, the pure level).
final class HTTPClientResponseReaderTests: XCTestCase {
    private func read(_ pieces: [String]) throws -> HTTPClient.Response {
        var reader = HTTPClient.ResponseReader(maxHeadBytes: 16 * 1024, maxBodyBytes: 64 * 1024)
        for piece in pieces {
            try Array(piece.utf8).withUnsafeBytes { try reader.append($0) }
        }
        return try reader.finish()
    }

    func testResponseReader_SkipsInterimAnswers_AndReadsTheFinalOne() throws {
        // RFC 9110 §15.2: a client must be able to parse 1xx answers before the final one, and may skip them.
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        for pieces in [["HTTP/1.1 100 Continue\r\n\r\n" + final],
                       ["HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", final],
                       ["HTTP/1.1 100 Cont", "inue\r\n\r\nHTTP/1.1 2", "00 OK\r\nContent-Length: 2\r\n\r\no", "k"]] {
            let response = try read(pieces)
            XCTAssertEqual(response.status, 200, "\(pieces)")
            XCTAssertEqual(response.body, Array("ok".utf8), "\(pieces)")
        }
        // The twin: an answer that is only interim has no final status.
        XCTAssertThrowsError(try read(["HTTP/1.1 100 Continue\r\n\r\n"]))
    }

    func testResponseReader_RefusesMoreThanFiveInterimAnswers() throws {
        let interim = String(repeating: "HTTP/1.1 102 Processing\r\n\r\n", count: 6)
        XCTAssertThrowsError(try read([interim + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])) { error in
            XCTAssertEqual(error as? HTTPClient.Failure, .malformed("more than 5 interim (1xx) answers"))
        }
        XCTAssertEqual(try read([String(repeating: "HTTP/1.1 102 Processing\r\n\r\n", count: 5) + "HTTP/1.1 204 No Content\r\n\r\n"]).status, 204)
    }
}
