import MiniHTTP
import MiniHTTPTesting
import XCTest

final class SmokeTests: XCTestCase {
    func testServer_AnswersGetAndPipelined() throws {
        var router = Router()
        router.add(.get, "/hello", immediate: { _ in .text("hi") })
        router.add(.post, "/echo", deferred: { request in HTTPResponse(body: request.body) })
        let server = try HTTPServer.start(configuration: .testing(), routes: router.build())
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let first = try client.roundTrip("GET", "/hello")
        XCTAssertEqual(first.rawText, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nhi")
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /nope HTTP/1.1\r\nHost: x\r\n\r\nDELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readResponse().text, "abc")
        XCTAssertEqual(try client.readResponse().status, 404)
        let third = try client.readResponse()
        XCTAssertEqual(third.status, 405)
        XCTAssertEqual(third.headers["Allow"], "GET, HEAD")
    }
}
