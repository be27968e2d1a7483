import MiniHTTP
import MiniHTTPTesting
import XCTest

final class ServerLimitsTests: XCTestCase {
    private var server: HTTPServer!

    override func setUpWithError() throws {
        server = try ServerFixture.start()
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// Sends `raw` on a fresh connection and expects `body` in a keep-alive 200.
    private func assertAccepted(_ raw: [UInt8], body: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let client = try ServerFixture.client(server)
            try client.send(raw)
            XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText(body), file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    private func assertAccepted(_ raw: String, body: String, file: StaticString = #filePath, line: UInt = #line) {
        assertAccepted(Array(raw.utf8), body: body, file: file, line: line)
    }

    /// Sends `raw` on a fresh connection and expects the HTTP layer's own `code` error, then a close.
    private func assertRejected(_ raw: [UInt8], _ code: Int, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let client = try ServerFixture.client(server)
            ServerFixture.sendIgnoringDisconnect(client, raw)
            XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(code), file: file, line: line)
            XCTAssertTrue(try client.waitForClose(), "connection stays open", file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    private func assertRejected(_ raw: String, _ code: Int, file: StaticString = #filePath, line: UInt = #line) {
        assertRejected(Array(raw.utf8), code, file: file, line: line)
    }

    // MARK: - Head size and header count

    /// A GET /hello whose head (through the blank line) is exactly `size` bytes.
    private static func head(ofSize size: Int) -> String {
        let fixed = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: \r\n\r\n"
        return "GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: \(String(repeating: "p", count: size - fixed.utf8.count))\r\n\r\n"
    }

    func testHead_Accepted_WhenExactly16KiB() {
        XCTAssertEqual(Self.head(ofSize: 16384).utf8.count, 16384)
        assertAccepted(Self.head(ofSize: 16384), body: "hi")
    }

    func testHead_Answers431_WhenOneByteOver16KiB() {
        assertRejected(Self.head(ofSize: 16385), 431)
    }

    func testHead_Answers431_WhenUnterminatedHeadPassesLimit() {
        assertRejected(String(repeating: "a", count: 16385), 431)
    }

    private static func request(withHeaderCount count: Int) -> String {
        "GET /hello HTTP/1.1\r\nHost: x\r\n" + (1..<count).map { "X-\($0): v\r\n" }.joined() + "\r\n"
    }

    func testHeaderCount_Accepted_When100() {
        assertAccepted(Self.request(withHeaderCount: 100), body: "hi")
    }

    func testHeaderCount_Answers431_When101() {
        assertRejected(Self.request(withHeaderCount: 101), 431)
    }

    // MARK: - Body size

    func testBody_Accepted_WhenExactly1MiB() {
        let raw = Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n".utf8) + [UInt8](repeating: 0x62, count: 1024 * 1024)
        assertAccepted(raw, body: "1048576")
    }

    func testBody_Answers413_WhenContentLengthOneByteOver1MiB() {
        let raw = Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n".utf8) + [UInt8](repeating: 0x62, count: 1024 * 1024 + 1)
        assertRejected(raw, 413)
    }

    private static func chunked(_ sizes: [Int]) -> [UInt8] {
        var raw = Array("POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for size in sizes {
            raw += Array("\(String(size, radix: 16))\r\n".utf8) + [UInt8](repeating: 0x63, count: size) + Array("\r\n".utf8)
        }
        return raw + Array("0\r\n\r\n".utf8)
    }

    func testChunkedBody_Accepted_WhenExactly1MiB() {
        assertAccepted(Self.chunked([512 * 1024, 512 * 1024 - 1, 1]), body: "1048576")
    }

    func testChunkedBody_Answers413_WhenGrowingPast1MiB() {
        assertRejected(Self.chunked([512 * 1024, 512 * 1024, 1]), 413)
    }

    // MARK: - Malformed requests: each rejected input beside its accepted twin

    func testRequestLine_Answers400_WhenMalformed() {
        assertAccepted("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", body: "hi")
        assertRejected("GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400)
        assertRejected("GET /hello\r\nHost: x\r\n\r\n", 400)
        assertRejected("GET hello HTTP/1.1\r\nHost: x\r\n\r\n", 400)
        assertRejected("\u{1}GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400)
    }

    func testBareLF_Answers400() {
        assertAccepted("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n", body: "hi")
        assertRejected("GET /hello HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n", 400)
        assertRejected("GET /hello HTTP/1.1\nHost: x\n\n", 400)
    }

    func testObsFold_Answers400() {
        assertAccepted("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: 1 2\r\n\r\n", body: "hi")
        assertRejected("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", 400)
    }

    func testSpaceBeforeColon_Answers400() {
        assertAccepted("GET /hello HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n", body: "hi")
        assertRejected("GET /hello HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n", 400)
    }

    func testContentLength_Answers400_WhenInvalid() {
        assertAccepted("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", body: "abc")
        assertRejected("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3x\r\n\r\nabc", 400)
        assertRejected("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\nabc", 400)
        assertRejected("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400)
    }

    func testHost_Answers400_WhenMissingOnHTTP11() {
        let client: RawHTTPClient
        do {
            client = try ServerFixture.client(server)
            try client.send("GET /hello HTTP/1.0\r\n\r\n")
            XCTAssertEqual(try client.readResponse().status, 200)
        } catch {
            return XCTFail("\(error)")
        }
        assertRejected("GET /hello HTTP/1.1\r\n\r\n", 400)
    }

    func testChunkSize_Answers400_WhenInvalid() {
        let head = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertAccepted(head + "3\r\nabc\r\n0\r\n\r\n", body: "abc")
        assertRejected(head + "3g\r\nabc\r\n0\r\n\r\n", 400)
        assertRejected(head + "1 0\r\n0123456789abcdef\r\n0\r\n\r\n", 400)
    }

    func testContentLengthWithTransferEncoding_Answers400() {
        let raw = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        assertRejected(raw, 400)
        assertAccepted(raw.replacingOccurrences(of: "Content-Length: 3\r\n", with: ""), body: "abc")
    }

    func testTransferEncodingGzip_Answers501() {
        assertRejected("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501)
        assertAccepted("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", body: "")
    }

    func testHTTP20RequestLine_Answers505() {
        assertRejected("GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", 505)
        assertAccepted("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", body: "hi")
    }

    func testProtocolError_EndsPipeline_WhenEarlierRequestsWereAnswered() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost : x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(400))
        XCTAssertTrue(try client.waitForClose())
    }

    // MARK: - Chunk extensions, trailers and HTTP/1.0 framing (probe F8): 400 and close

    private static let chunkedEcho = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

    func testChunkExtension_Answers400_WhenItHidesABareLF() {
        assertRejected(Self.chunkedEcho + "1;a\nGET / HTTP/1.1\r\na\r\n0\r\n\r\n", 400)
    }

    func testChunkExtension_Answers400_WhenItHasNULOrBareCROrControlBytes() {
        assertRejected(Self.chunkedEcho + "1;\u{0}\r\na\r\n0\r\n\r\n", 400)
        assertRejected(Self.chunkedEcho + "1;a\rb\r\na\r\n0\r\n\r\n", 400)
        assertRejected(Self.chunkedEcho + "1;a=\u{1}\r\na\r\n0\r\n\r\n", 400)
        assertRejected(Self.chunkedEcho + "1;a=b c\r\na\r\n0\r\n\r\n", 400)
    }

    func testChunkExtension_Accepted_WhenTokenOrQuotedString() {
        assertAccepted(Self.chunkedEcho + "1;name=value\r\na\r\n0\r\n\r\n", body: "a")
        assertAccepted(Self.chunkedEcho + "1;name=\"quoted value\"\r\na\r\n0\r\n\r\n", body: "a")
    }

    func testTrailer_Answers400_WhenItHasNULControlBytesOrBareLF() {
        // The probe's shape, with a second request behind it that must not be answered.
        assertRejected(Self.chunkedEcho + "0\r\nX\u{0}: \u{1}bad\nline\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400)
        assertRejected(Self.chunkedEcho + "0\r\nX: bad\nline\r\n\r\n", 400)
        assertRejected(Self.chunkedEcho + "0\r\nno colon\r\n\r\n", 400)
    }

    func testTrailer_Accepted_WhenAValidFieldLine() {
        assertAccepted(Self.chunkedEcho + "1\r\na\r\n0\r\nX-Checksum: abc\r\n\r\n", body: "a")
    }

    func testTransferEncoding_Answers400_OnHTTP10Request() {
        assertRejected("POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
        do {
            let client = try ServerFixture.client(server)
            try client.send("POST /echo HTTP/1.0\r\nContent-Length: 1\r\n\r\na")
            XCTAssertEqual(try client.readResponse().text, "a")
        } catch {
            XCTFail("\(error)")
        }
    }
}
