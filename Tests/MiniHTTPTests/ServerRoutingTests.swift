import MiniHTTP
import MiniHTTPTesting
import XCTest

final class ServerRoutingTests: XCTestCase {
    private var server: HTTPServer!

    override func tearDown() {
        server?.stop()
        server = nil
    }

    func testKnownPath_Answers405WithAllow_WhenMethodNotRouted() throws {
        server = try ServerFixture.start()
        let client = try ServerFixture.client(server)
        let response = try client.roundTrip("DELETE", "/hello")
        XCTAssertEqual(response.rawText, "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nAllow: GET, HEAD\r\n"
            + "Content-Length: 23\r\n\r\n405 Method Not Allowed\n")
        XCTAssertEqual(try client.roundTrip("GET", "/echo").headers["Allow"], "POST")
        // The connection is still usable: 405 is an answer, not a protocol error.
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
    }

    func testUnknownPath_Answers404() throws {
        server = try ServerFixture.start()
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/nope").rawText,
                       "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 14\r\n\r\n404 Not Found\n")
        XCTAssertEqual(try client.roundTrip("HEAD", "/nope").rawText,
                       "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 14\r\n\r\n")
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
    }

    func testUnknownPath_UsesFallback_WhenNotFoundHandlerSet() throws {
        var router = ServerFixture.router()
        router.setNotFound(.deferred { request in .text("nothing at \(request.path)\n", status: .notFound) })
        server = try ServerFixture.start(router: router)
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/nope?x=1").rawText,
                       "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 17\r\n\r\nnothing at /nope\n")
        XCTAssertEqual(try client.roundTrip("PUT", "/hello").status, 405)
    }

    func testHandler_SendsErrorsResponse_WhenThrowingHTTPResponseError() throws {
        server = try ServerFixture.start()
        let client = try ServerFixture.client(server)
        let expected = "HTTP/1.1 418 Status 418\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 16\r\n\r\nshort and stout\n"
        XCTAssertEqual(try client.roundTrip("GET", "/teapot").rawText, expected)
        XCTAssertEqual(try client.roundTrip("GET", "/teapot-deferred").rawText, expected)
        XCTAssertEqual(try client.roundTrip("GET", "/teapot").status, 418)
    }

    func testHandler_Answers500_WhenThrowingOtherError() throws {
        server = try ServerFixture.start()
        let client = try ServerFixture.client(server)
        let expected = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\n500 Internal Server Error\n"
        XCTAssertEqual(try client.roundTrip("GET", "/crash").rawText, expected)
        XCTAssertEqual(try client.roundTrip("GET", "/crash-deferred").rawText, expected)
        // The request was read in full, so the connection goes on.
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
    }
}
