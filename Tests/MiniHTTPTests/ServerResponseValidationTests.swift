import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Handlers that return responses the serializer cannot frame: the client gets a plain 500 and
/// a stream it can keep parsing (probe F6, F7).
final class ServerResponseValidationTests: XCTestCase {
    private var server: HTTPServer!

    /// The exact bytes of the keep-alive 500 sent in place of a response that cannot be framed.
    private static let plain500 = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\n500 Internal Server Error\n"

    override func setUpWithError() throws {
        var router = ServerFixture.router()
        router.add(.get, "/inject", immediate: { _ in
            HTTPResponse(status: .found, headers: ["Location": "https://a.example/x\r\nSet-Cookie: pwned=1\r\nX-Injected: yes"])
        })
        router.add(.get, "/inject-deferred", deferred: { _ in
            HTTPResponse(status: .found, headers: ["Location": "https://c.example/\u{0}nul"])
        })
        router.add(.get, "/no-content-body", immediate: { _ in
            HTTPResponse(status: HTTPStatus(204), headers: ["Content-Type": "text/html"], body: Array("<html>error page</html>".utf8))
        })
        router.add(.get, "/not-modified-body", deferred: { _ in
            HTTPResponse(status: HTTPStatus(304), body: Array("<html>error page</html>".utf8))
        })
        router.add(.get, "/no-content", immediate: { _ in HTTPResponse(status: HTTPStatus(204), headers: ["X-A": "1"]) })
        server = try ServerFixture.start(router: router)
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// Pipelines `GET path` and `GET /hello`; expects `first` exactly, then the hello answer.
    private func assertPipelined(_ path: String, answers first: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let client = try ServerFixture.client(server)
            try client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(try client.readResponse().rawText, first, file: file, line: line)
            XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hi"), "the stream stays in step", file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    func testLocationWithCRLF_Answers500_AndStreamStaysParseable() {
        assertPipelined("/inject", answers: Self.plain500)
    }

    func testLocationWithNUL_Answers500_WhenHandlerIsDeferred() {
        assertPipelined("/inject-deferred", answers: Self.plain500)
    }

    func testStatus204WithBody_Answers500() {
        assertPipelined("/no-content-body", answers: Self.plain500)
    }

    func testStatus304WithBody_Answers500() {
        assertPipelined("/not-modified-body", answers: Self.plain500)
    }

    func testStatus204WithoutBody_Answers204_WithNoContentLengthAndNoBody() {
        assertPipelined("/no-content", answers: "HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n")
    }
}
