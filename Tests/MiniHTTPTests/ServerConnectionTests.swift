import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

final class ServerConnectionTests: XCTestCase {
    private var server: HTTPServer!

    override func setUpWithError() throws {
        server = try ServerFixture.start()
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    func testKeepAlive_ServesSequentialRequestsOnOneConnection() throws {
        let client = try ServerFixture.client(server)
        for _ in 0..<3 {
            XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        }
        XCTAssertEqual(try client.roundTrip("POST", "/echo", body: Array("abc".utf8)).rawText, ServerFixture.okText("abc"))
    }

    func testKeepAlive_AnImmediateAnswerChangesNoEpollRegistration_ADeferredOneChangesTwo() throws {
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        let before = server.interestChanges
        for _ in 0..<100 {
            XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        }
        XCTAssertEqual(server.interestChanges - before, 0, "an immediate answer leaves the connection registered as it was")
        // The twin: a deferred handler stops the reading while it runs, then resumes it.
        let deferredBefore = server.interestChanges
        for _ in 0..<100 {
            XCTAssertEqual(try client.roundTrip("POST", "/echo", body: Array("abc".utf8)).rawText, ServerFixture.okText("abc"))
        }
        // The last answer can reach the client before its loop restores the registration; the
        // loop reads this next request only after that.
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(server.interestChanges - deferredBefore, 200)
    }

    func testConnectionClose_ClosesAfterResponse_WhenClientAsks() throws {
        let client = try ServerFixture.client(server)
        let response = try client.roundTrip("GET", "/hello", headers: [("Connection", "close")])
        XCTAssertEqual(response.rawText, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
        XCTAssertTrue(try client.waitForClose())
    }

    func testPipelining_AnswersInRequestOrder_WhenDeferredHandlerIsSlower() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
            + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
            + "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(try client.readResponse().text, "slow")
        XCTAssertEqual(try client.readResponse().text, "hi")
        XCTAssertEqual(try client.readResponse().text, "abc")
        XCTAssertEqual(try client.readResponse().text, "slow")
        XCTAssertEqual(try client.readResponse(headOnly: true).rawText, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\n")
        XCTAssertEqual(try client.readResponse().text, "404 Not Found\n")
        XCTAssertEqual(try client.readResponse().text, "hi")
        XCTAssertTrue(try client.waitForClose())
    }

    func testPipelining_AnswersEveryRequest_WhenThousandsArriveInOneBurst() throws {
        let count = 20_000
        let client = try ServerFixture.client(server)
        let burst = Array(String(repeating: "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", count: count).utf8)
        // Written from another thread so neither side can block the other on full socket buffers.
        let fd = client.fd
        let writer = Thread {
            var sent = 0
            while sent < burst.count {
                let written = burst.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                sent += written
            }
        }
        writer.start()
        for index in 0..<count {
            let response = try client.readResponse()
            guard response.text == "hi" else { return XCTFail("response \(index): \(response.rawText)") }
        }
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
    }

    func testContentLength_DeliversBodyToHandler() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello")
        try client.send(" world")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hello world"))
    }

    func testChunkedBody_DeliversDecodedBody_WithExtensionsAndTrailers() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n")
        try client.send("6 ;c\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hello world"))
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
    }

    func testExpectContinue_SendsInterimResponseBeforeClientSendsBody() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let interim = try client.readResponse()
        XCTAssertEqual(interim.rawText, "HTTP/1.1 100 Continue\r\n\r\n")
        try client.send("hello")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hello"))
        // The next request on the connection gets its own interim response.
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(try client.readResponse().status, 100)
        try client.send("2\r\nok\r\n0\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("ok"))
    }

    func testExpectContinue_Answers413InsteadOf100_WhenBodyOverLimit() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1048577\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(413))
        XCTAssertTrue(try client.waitForClose())
    }

    func testExpectContinue_AcceptsBodyOfExactly1MiB() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /length HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1048576\r\n\r\n")
        XCTAssertEqual(try client.readResponse().status, 100)
        try client.send([UInt8](repeating: 0x61, count: 1024 * 1024))
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("1048576"))
    }

    func testHead_SendsSameHeadersAsGetWithoutBody() throws {
        let client = try ServerFixture.client(server)
        let get = try client.roundTrip("GET", "/big?bytes=1000")
        let head = try client.roundTrip("HEAD", "/big?bytes=1000")
        XCTAssertEqual(get.body.count, 1000)
        XCTAssertEqual(head.headers["Content-Length"], "1000")
        XCTAssertEqual(head.raw, Array(get.raw.prefix(get.raw.count - 1000)))
        XCTAssertEqual(head.body, [])
        // Had any body byte followed, it would now be read as the next status line.
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
    }

    func testHTTP10_ClosesByDefault() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /hello HTTP/1.0\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText,
                       "HTTP/1.0 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
        XCTAssertTrue(try client.waitForClose())
    }

    func testHTTP10_KeepsAlive_WhenClientAsks() throws {
        let client = try ServerFixture.client(server)
        for _ in 0..<2 {
            try client.send("GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
            XCTAssertEqual(try client.readResponse().rawText,
                           "HTTP/1.0 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi")
        }
    }

    func testHalfClose_StillAnswers_ThenCloses() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
        client.shutdownWrite()
        XCTAssertEqual(try client.readResponse().text, "body")
        XCTAssertTrue(try client.waitForClose())
    }

    func testHalfClose_AnswersEveryPipelinedRequest_ThenCloses() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        client.shutdownWrite()
        XCTAssertEqual(try client.readResponse().text, "slow")
        XCTAssertEqual(try client.readResponse().text, "hi")
        XCTAssertTrue(try client.waitForClose())
    }

    func testHalfClose_ClosesWithoutAnswer_WhenRequestIncomplete() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbo")
        client.shutdownWrite()
        XCTAssertTrue(try client.waitForClose())
    }
}
