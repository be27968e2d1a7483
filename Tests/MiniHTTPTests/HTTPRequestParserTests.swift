import MiniHTTP
import XCTest

final class HTTPRequestParserTests: XCTestCase {
    /// What a parser made of some bytes: the requests, then the error or whether bytes are left.
    private struct Outcome: Equatable, CustomStringConvertible {
        var requests: [Parsed] = []
        var error: HTTPParseError?
        var pending = false

        var description: String { "requests: \(requests), error: \(String(describing: error)), pending: \(pending)" }
    }

    /// The observable parts of one `HTTPRequest`.
    private struct Parsed: Equatable {
        var method: String
        var target: String
        var path: String
        var query: String?
        var minorVersion: Int
        var headers: HTTPHeaders
        var body: String

        init(_ request: HTTPRequest) {
            method = request.method.rawValue
            target = request.target
            path = request.path
            query = request.query
            minorVersion = request.minorVersion
            headers = request.headers
            body = String(decoding: request.body, as: UTF8.self)
        }

        init(_ method: String, _ target: String, minorVersion: Int = 1, headers: HTTPHeaders = ["Host": "x"], body: String = "") {
            self.init(HTTPRequest(method: HTTPMethod(rawValue: method), target: target, minorVersion: minorVersion, headers: headers, body: Array(body.utf8)))
        }
    }

    private static func parse(_ bytes: [UInt8], limits: HTTPLimits, oneByteAtATime: Bool) -> Outcome {
        var parser = HTTPRequestParser(limits: limits)
        var outcome = Outcome()
        let pieces = oneByteAtATime ? bytes.map { [$0] } : [bytes]
        for piece in pieces {
            parser.append(piece)
            do {
                while let request = try parser.next() { outcome.requests.append(Parsed(request)) }
            } catch {
                outcome.error = error
                return outcome
            }
        }
        outcome.pending = parser.hasPartialRequest
        return outcome
    }

    /// Parses `text` all at once and one byte at a time; both must give `expected`.
    private func assertParses(_ text: String, _ expected: Outcome, limits: HTTPLimits = HTTPLimits(), file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(text.utf8)
        XCTAssertEqual(Self.parse(bytes, limits: limits, oneByteAtATime: false), expected, "all at once", file: file, line: line)
        XCTAssertEqual(Self.parse(bytes, limits: limits, oneByteAtATime: true), expected, "one byte at a time", file: file, line: line)
    }

    private func assertRejects(_ text: String, _ error: HTTPParseError, limits: HTTPLimits = HTTPLimits(), file: StaticString = #filePath, line: UInt = #line) {
        assertParses(text, Outcome(error: error), limits: limits, file: file, line: line)
    }

    private func assertAccepts(_ text: String, _ requests: [Parsed], limits: HTTPLimits = HTTPLimits(), file: StaticString = #filePath, line: UInt = #line) {
        assertParses(text, Outcome(requests: requests), limits: limits, file: file, line: line)
    }

    private static let small: HTTPLimits = {
        var limits = HTTPLimits()
        limits.maxHeadBytes = 64
        limits.maxHeaderCount = 3
        limits.maxBodyBytes = 10
        limits.maxChunkLineBytes = 8
        return limits
    }()

    // MARK: - Accepted requests

    func testParser_ParsesGetWithQuery() {
        assertAccepts("GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: example\r\nAccept:  */* \t\r\n\r\n",
                      [Parsed("GET", "/a/b?x=1&y=%20", headers: ["Host": "example", "Accept": "*/*"])])
        let parsed = Parsed("GET", "/a/b?x=1&y=%20")
        XCTAssertEqual(parsed.path, "/a/b")
        XCTAssertEqual(parsed.query, "x=1&y=%20")
    }

    func testParser_ParsesContentLengthBody() {
        assertAccepts("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
                      [Parsed("POST", "/p", headers: ["Host": "x", "Content-Length": "5"], body: "hello")])
    }

    func testParser_WaitsForRestOfBody_WhenContentLengthNotYetReached() {
        assertParses("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nhello", Outcome(pending: true))
    }

    func testParser_AcceptsRepeatedEqualContentLength_AndRejectsDifferingOnes() {
        assertAccepts("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\nab",
                      [Parsed("POST", "/p", headers: ["Host": "x", "Content-Length": "2, 2"], body: "ab")])
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 3\r\n\r\nab", .malformed("conflicting Content-Length values"))
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab", .malformed("conflicting Content-Length values"))
    }

    func testParser_DecodesChunkedBody_WithExtensionsAndTrailers() {
        let text = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n6 ; ext\r\n world\r\nB\r\n 0123456789\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n"
        assertAccepts(text, [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "hello world 0123456789")])
    }

    func testParser_ReturnsPipelinedRequestsInOrder() {
        let text = "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
            + "GET /4 HTTP/1.0\r\n\r\n"
        assertAccepts(text, [
            Parsed("GET", "/1"),
            Parsed("POST", "/2", headers: ["Host": "x", "Content-Length": "3"], body: "abc"),
            Parsed("POST", "/3", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "de"),
            Parsed("GET", "/4", minorVersion: 0, headers: [:]),
        ])
    }

    func testParser_IgnoresEmptyLinesBeforeRequestLine() {
        assertAccepts("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", [Parsed("GET", "/")])
    }

    func testParser_RejectsLeadingBareLF_AllAtOnceOrByteByByte() {
        // Only CRLF counts as an empty line before the request line; a lone LF is a bare LF.
        assertRejects("\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", .malformed("bare LF in head"))
        assertParses("GET / HTTP/1.1\r\nHost: x\r\n\r\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
                     Outcome(requests: [Parsed("GET", "/")], error: .malformed("bare LF in head")))
    }

    func testParser_KeepsHeaderOrderAndSpelling() {
        assertAccepts("GET / HTTP/1.1\r\nhost: x\r\nX-B: 2\r\nx-a: 1\r\nX-B: 3\r\n\r\n",
                      [Parsed("GET", "/", headers: ["host": "x", "X-B": "2", "x-a": "1", "X-B": "3"])])
    }

    func testParser_ReportsAwaitingContinue_OnlyUntilBodyArrives() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        XCTAssertNil(try parser.next())
        XCTAssertTrue(parser.isAwaitingContinue)
        parser.append(Array("ok".utf8))
        XCTAssertEqual(try parser.next().map { String(decoding: $0.body, as: UTF8.self) }, "ok")
        XCTAssertFalse(parser.isAwaitingContinue)
        XCTAssertFalse(parser.hasPartialRequest)
    }

    func testParser_DoesNotAwaitContinue_WhenHTTP10OrNoExpect() throws {
        for head in ["POST /p HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
                     "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n"] {
            var parser = HTTPRequestParser()
            parser.append(Array(head.utf8))
            XCTAssertNil(try parser.next())
            XCTAssertFalse(parser.isAwaitingContinue, head)
            XCTAssertTrue(parser.hasPartialRequest, head)
        }
    }

    func testParser_RejectsUnknownExpectation() {
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\nab", .malformed("unsupported Expect"))
    }

    // MARK: - Malformed input, each with its accepted twin

    func testParser_RejectsMalformedRequestLine() {
        assertAccepts("GET / HTTP/1.1\r\nHost: x\r\n\r\n", [Parsed("GET", "/")])
        assertRejects("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", .malformed("malformed request line"))
        assertRejects("GET /\r\nHost: x\r\n\r\n", .malformed("malformed request line"))
        assertRejects("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", .malformed("invalid method"))
        assertRejects("GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n", .malformed("invalid request target"))
        assertRejects("GET / HTTP/1.1x\r\nHost: x\r\n\r\n", .malformed("invalid HTTP version"))
        assertRejects("GET / http/1.1\r\nHost: x\r\n\r\n", .malformed("invalid HTTP version"))
    }

    func testParser_RejectsBareLFInHead() {
        assertRejects("GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n", .malformed("bare LF in head"))
    }

    func testParser_RejectsBareLF_WhenEveryLineEndsInLF() {
        // A head that never contains CRLFCRLF must still be rejected, not waited on until a timeout.
        assertRejects("GET / HTTP/1.1\nHost: x\n\n", .malformed("bare LF in head"))
    }

    func testParser_RejectsBareCRInHead() {
        assertRejects("GET / HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n", .malformed("bare CR in head"))
    }

    func testParser_RejectsObsFold() {
        assertAccepts("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1 2\r\n\r\n", [Parsed("GET", "/", headers: ["Host": "x", "X-A": "1 2"])])
        assertRejects("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", .malformed("header line without ':'"))
        assertRejects("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\tX-B: 2\r\n\r\n", .malformed("invalid header name"))
    }

    func testParser_RejectsSpaceBeforeColon() {
        assertRejects("GET / HTTP/1.1\r\nHost : x\r\n\r\n", .malformed("invalid header name"))
        assertRejects("GET / HTTP/1.1\r\nHost: x\r\n: empty\r\n\r\n", .malformed("invalid header name"))
    }

    func testParser_RejectsControlCharacterInHeaderValue() {
        assertRejects("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{7F}b\r\n\r\n", .malformed("invalid header value"))
    }

    func testParser_RejectsInvalidContentLength() {
        for value in ["abc", "-1", "+1", "1.0", "0x10", "", "1,,1"] {
            assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\n", .malformed("invalid Content-Length"))
        }
    }

    func testParser_RequiresExactlyOneHost_WhenHTTP11() {
        assertAccepts("GET / HTTP/1.0\r\n\r\n", [Parsed("GET", "/", minorVersion: 0, headers: [:])])
        assertRejects("GET / HTTP/1.1\r\n\r\n", .malformed("HTTP/1.1 request needs exactly one Host header"))
        assertRejects("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .malformed("HTTP/1.1 request needs exactly one Host header"))
    }

    func testParser_RejectsBadChunkSize() {
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertAccepts(head + "3\r\nabc\r\n0\r\n\r\n", [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "abc")])
        assertRejects(head + "x3\r\nabc\r\n0\r\n\r\n", .malformed("invalid chunk size"))
        assertRejects(head + ";ext\r\nabc\r\n0\r\n\r\n", .malformed("invalid chunk size"))
        assertRejects(head + "-3\r\nabc\r\n0\r\n\r\n", .malformed("invalid chunk size"))
    }

    func testParser_RejectsWhitespaceInsideChunkSize() {
        // RFC 9112 §7.1: chunk-size is 1*HEXDIG; "1 0" must not be read as 0x10.
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertRejects(head + "1 0\r\n0123456789abcdef\r\n0\r\n\r\n", .malformed("invalid chunk size"))
    }

    func testParser_RejectsChunkDataWithoutCRLF() {
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertRejects(head + "3\r\nabcd\r\n0\r\n\r\n", .malformed("chunk data not followed by CRLF"))
    }

    func testParser_RejectsChunkSizeLine_WhenLongerThanLimit() {
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertAccepts(head + "1;abc\r\nz\r\n0\r\n\r\n", [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "z")], limits: Self.small)
        assertRejects(head + "1;abcdefgh\r\nz\r\n0\r\n\r\n", .malformed("chunk size line too long"), limits: Self.small)
    }

    func testParser_RejectsContentLengthWithTransferEncoding() {
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", .conflictingFraming)
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", .conflictingFraming)
    }

    func testParser_RejectsTransferCodingsOtherThanChunked() {
        assertAccepts("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n",
                      [Parsed("POST", "/p", headers: ["Host": "x", "Transfer-Encoding": "Chunked"])])
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding)
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding)
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .unsupportedTransferEncoding)
    }

    func testParser_RejectsOtherHTTPVersions() {
        assertRejects("GET / HTTP/2.0\r\nHost: x\r\n\r\n", .unsupportedVersion)
        assertRejects("GET / HTTP/0.9\r\nHost: x\r\n\r\n", .unsupportedVersion)
    }

    func testParseError_MapsToStatus() {
        XCTAssertEqual(HTTPParseError.headTooLarge.status.code, 431)
        XCTAssertEqual(HTTPParseError.tooManyHeaders.status.code, 431)
        XCTAssertEqual(HTTPParseError.bodyTooLarge.status.code, 413)
        XCTAssertEqual(HTTPParseError.conflictingFraming.status.code, 400)
        XCTAssertEqual(HTTPParseError.malformed("x").status.code, 400)
        XCTAssertEqual(HTTPParseError.unsupportedTransferEncoding.status.code, 501)
        XCTAssertEqual(HTTPParseError.unsupportedVersion.status.code, 505)
    }

    // MARK: - Limits

    /// A GET whose head (request line through the blank line) is exactly `size` bytes.
    private static func head(ofSize size: Int) -> String {
        let fixed = "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: \r\n\r\n"
        return "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: \(String(repeating: "a", count: size - fixed.utf8.count))\r\n\r\n"
    }

    func testParser_AcceptsHead_WhenExactly16KiB() {
        let text = Self.head(ofSize: 16 * 1024)
        XCTAssertEqual(text.utf8.count, 16384)
        let outcome = Self.parse(Array(text.utf8), limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(outcome.requests.count, 1)
        XCTAssertNil(outcome.error)
    }

    func testParser_RejectsHead_WhenOneByteOver16KiB() {
        let text = Self.head(ofSize: 16 * 1024 + 1)
        XCTAssertEqual(Self.parse(Array(text.utf8), limits: HTTPLimits(), oneByteAtATime: false), Outcome(error: .headTooLarge))
    }

    func testParser_RejectsHead_WhenLimitPassedBeforeTerminatorArrives() {
        let bytes = Array(Self.head(ofSize: 16 * 1024 + 5).utf8.dropLast(4))
        XCTAssertEqual(bytes.count, 16 * 1024 + 1)
        XCTAssertEqual(Self.parse(bytes, limits: HTTPLimits(), oneByteAtATime: false), Outcome(error: .headTooLarge))
        XCTAssertEqual(Self.parse(Array(bytes.dropLast()), limits: HTTPLimits(), oneByteAtATime: false), Outcome(pending: true))
    }

    func testParser_HeadLimit_SameByteAtATime() {
        assertAccepts(Self.head(ofSize: 64), [Parsed("GET", "/", headers: ["Host": "x", "X-Pad": String(repeating: "a", count: 64 - 36)])], limits: Self.small)
        assertRejects(Self.head(ofSize: 65), .headTooLarge, limits: Self.small)
    }

    private static func request(withHeaderCount count: Int) -> String {
        "GET / HTTP/1.1\r\nHost: x\r\n" + (1..<count).map { "X-\($0): v\r\n" }.joined() + "\r\n"
    }

    func testParser_AcceptsExactly100Headers_AndRejects101() {
        let accepted = Self.parse(Array(Self.request(withHeaderCount: 100).utf8), limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(accepted.requests.first?.headers.count, 100)
        XCTAssertNil(accepted.error)
        let rejected = Self.parse(Array(Self.request(withHeaderCount: 101).utf8), limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(rejected, Outcome(error: .tooManyHeaders))
    }

    func testParser_HeaderCountLimit_SameByteAtATime() {
        XCTAssertEqual(Self.parse(Array(Self.request(withHeaderCount: 3).utf8), limits: Self.small, oneByteAtATime: true).requests.count, 1)
        assertRejects(Self.request(withHeaderCount: 4), .tooManyHeaders, limits: Self.small)
    }

    func testParser_AcceptsBodyOfExactly1MiB_AndRejectsOneByteMore() {
        let mebibyte = 1024 * 1024
        let accepted = Self.parse(Array("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(mebibyte)\r\n\r\n".utf8) + [UInt8](repeating: 65, count: mebibyte),
                                  limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(accepted.requests.first?.body.utf8.count, mebibyte)
        XCTAssertNil(accepted.error)
        // Rejected from the declared length alone, before any body byte arrives.
        let rejected = Self.parse(Array("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(mebibyte + 1)\r\n\r\n".utf8),
                                  limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(rejected, Outcome(error: .bodyTooLarge))
    }

    func testParser_RejectsAbsurdContentLength() {
        assertRejects("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", .bodyTooLarge)
    }

    func testParser_BodyLimit_SameByteAtATime() {
        let head = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: "
        assertAccepts(head + "10\r\n\r\n0123456789", [Parsed("POST", "/p", headers: ["Host": "x", "Content-Length": "10"], body: "0123456789")], limits: Self.small)
        assertRejects(head + "11\r\n\r\n0123456789a", .bodyTooLarge, limits: Self.small)
    }

    func testParser_RejectsChunkedBody_WhenItGrowsPastLimit() {
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        assertAccepts(head + "6\r\n012345\r\n4\r\n6789\r\n0\r\n\r\n",
                      [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "0123456789")], limits: Self.small)
        assertRejects(head + "6\r\n012345\r\n5\r\n6789a\r\n0\r\n\r\n", .bodyTooLarge, limits: Self.small)
    }

    func testParser_AcceptsChunkedBodyOfExactly1MiB_AndRejectsOneByteMore() {
        let head = Array("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let chunk = Array("100000\r\n".utf8) + [UInt8](repeating: 66, count: 1024 * 1024) + Array("\r\n".utf8)
        let accepted = Self.parse(head + chunk + Array("0\r\n\r\n".utf8), limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(accepted.requests.first?.body.utf8.count, 1024 * 1024)
        XCTAssertNil(accepted.error)
        let rejected = Self.parse(head + chunk + Array("1\r\nC\r\n0\r\n\r\n".utf8), limits: HTTPLimits(), oneByteAtATime: false)
        XCTAssertEqual(rejected, Outcome(error: .bodyTooLarge))
    }

    func testParser_RejectsTrailers_WhenLongerThanHeadLimit() {
        let head = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        assertAccepts(head + "T: \(String(repeating: "t", count: 57))\r\n\r\n",
                      [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"])], limits: Self.small)
        assertRejects(head + "T: \(String(repeating: "t", count: 80))\r\n\r\n", .headTooLarge, limits: Self.small)
    }

    func testParser_ReleasesConsumedBytes_AfterEachRequest() throws {
        var parser = HTTPRequestParser()
        for index in 0..<1000 {
            parser.append(Array("POST /\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".utf8))
            XCTAssertEqual(try parser.next()?.target, "/\(index)")
            XCTAssertEqual(parser.bufferedByteCount, 0)
            XCTAssertFalse(parser.hasPartialRequest)
        }
    }

    // MARK: - Chunk extensions, trailers, HTTP/1.0 framing (probe F8)

    private static let chunkedHead = "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

    /// The request `chunkedHead` starts, with body "a".
    private static let chunkedA = Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"], body: "a")

    func testParser_AcceptsChunkExtensions_WhenTokensOrQuotedStrings() {
        for line in ["1;name=value", "1;name=\"quoted\"", "1 ; a ; b = c\t;d", "1;a=\"\"", "1;q=\"x \\\" ; = \u{e9}\"", "1;n=\"tab\\\tok\""] {
            assertAccepts(Self.chunkedHead + line + "\r\na\r\n0\r\n\r\n", [Self.chunkedA])
        }
    }

    func testParser_Rejects400_WhenChunkExtensionHasBareLF() {
        // The probe's smuggling shape: a bare LF ends the line for some parsers, not for others.
        assertRejects(Self.chunkedHead + "1;a\nGET / HTTP/1.1\r\na\r\n0\r\n\r\n", .malformed("bare LF in chunk size line"))
        assertRejects(Self.chunkedHead + "1\na\r\n0\r\n\r\n", .malformed("bare LF in chunk size line"))
    }

    func testParser_Rejects400_WhenChunkExtensionHasBareCR() {
        assertRejects(Self.chunkedHead + "1;a\rb\r\na\r\n0\r\n\r\n", .malformed("bare CR in chunk size line"))
    }

    func testParser_Rejects400_WhenChunkExtensionHasControlBytes() {
        for control in ["\u{0}", "\u{1}", "\u{1b}", "\u{7f}"] {
            assertRejects(Self.chunkedHead + "1;\(control)\r\na\r\n0\r\n\r\n", .malformed("control character in chunk size line"))
            assertRejects(Self.chunkedHead + "1;a=\"\(control)\"\r\na\r\n0\r\n\r\n", .malformed("control character in chunk size line"))
        }
    }

    func testParser_Rejects400_WhenChunkExtensionBreaksGrammar() {
        for line in ["1;", "1; ", "1;=v", "1;a=", "1;a= ", "1;a=b c", "1;a b", "1;a;", "1;a=\"open", "1;a=\"x\"y", "1;a=\"\\", "1;a@b", "1;a=b/c", "1;a=\"x\" "] {
            assertRejects(Self.chunkedHead + line + "\r\na\r\n0\r\n\r\n", .malformed("invalid chunk extension"))
        }
        // Whitespace after the size is only allowed before an extension.
        assertRejects(Self.chunkedHead + "1 \r\na\r\n0\r\n\r\n", .malformed("invalid chunk size"))
    }

    func testParser_AcceptsTrailerFields() {
        assertAccepts(Self.chunkedHead + "1\r\na\r\n0\r\nX-Checksum: abc\r\nEmpty:\r\nTabs:\t1 2\t\r\nUtf8: caf\u{e9}\r\n\r\n", [Self.chunkedA])
    }

    func testParser_Rejects400_WhenTrailerHasNULOrControlBytesOrBareLF() {
        // The probe's shape: NUL in the name, a control byte and a bare LF in the value.
        assertRejects(Self.chunkedHead + "0\r\nX\u{0}: \u{1}bad\nline\r\n\r\nGET /h HTTP/1.1\r\nHost: x\r\n\r\n",
                      .malformed("control character in trailer section"))
        assertRejects(Self.chunkedHead + "0\r\nX: \u{1}bad\r\n\r\n", .malformed("control character in trailer section"))
        assertRejects(Self.chunkedHead + "0\r\nX: bad\nline\r\n\r\n", .malformed("bare LF in trailer section"))
        assertRejects(Self.chunkedHead + "0\r\nX: bad\rline\r\n\r\n", .malformed("bare CR in trailer section"))
        assertRejects(Self.chunkedHead + "0\r\nX: 1\n\r\n", .malformed("bare LF in trailer section"))
    }

    func testParser_Rejects400_WhenTrailerIsNotAFieldLine() {
        for line in ["no colon", ": empty name", "X Y: 1", "X : 1", " X: folded", "\tX: folded", "X(1): 1"] {
            assertRejects(Self.chunkedHead + "0\r\n" + line + "\r\n\r\n", .malformed("invalid trailer field"))
        }
    }

    func testParser_Rejects400_WhenHTTP10RequestHasTransferEncoding() {
        // RFC 9112 §6.1: faulty framing, whatever the coding.
        assertRejects("POST /c HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .malformed("Transfer-Encoding in HTTP/1.0 request"))
        assertRejects("POST /c HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n", .malformed("Transfer-Encoding in HTTP/1.0 request"))
        assertAccepts("POST /c HTTP/1.0\r\nContent-Length: 1\r\n\r\na", [Parsed("POST", "/c", minorVersion: 0, headers: ["Content-Length": "1"], body: "a")])
    }

    func testParser_RejectsTrailerLineExactlyAtHeadLimit_SameHoweverItArrives() {
        // `small` allows a 64-byte trailer section: one line of 62 bytes plus its CRLF fits.
        let fits = "T: \(String(repeating: "t", count: 59))"
        XCTAssertEqual(fits.utf8.count, 62)
        assertAccepts(Self.chunkedHead + "0\r\n" + fits + "\r\n\r\n", [Parsed("POST", "/c", headers: ["Host": "x", "Transfer-Encoding": "chunked"])], limits: Self.small)
        assertRejects(Self.chunkedHead + "0\r\n" + fits + "t\r\n\r\n", .headTooLarge, limits: Self.small)
    }

    // MARK: - Declared body size (the server's body budget)

    func testPendingBodyBytes_IsDeclaredLength_OnceHeadIsParsed() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nab".utf8))
        XCTAssertEqual(parser.pendingBodyBytes, 0)
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.pendingBodyBytes, 5000)
        parser.append([UInt8](repeating: 97, count: 4998))
        XCTAssertEqual(try parser.next()?.body.count, 5000)
        XCTAssertEqual(parser.pendingBodyBytes, 0)
    }

    func testPendingBodyBytes_GrowsWithEachChunkSizeLine() throws {
        var parser = HTTPRequestParser()
        parser.append(Array((Self.chunkedHead + "10\r\nabc").utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.pendingBodyBytes, 16)
        parser.append(Array("defghijklmnop\r\n20\r\n".utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.pendingBodyBytes, 48)
        parser.append(Array((String(repeating: "x", count: 32) + "\r\n0\r\n").utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.pendingBodyBytes, 48)
        parser.append(Array("\r\n".utf8))
        XCTAssertEqual(try parser.next()?.body.count, 48)
        XCTAssertEqual(parser.pendingBodyBytes, 0)
    }

    func testBufferedBodyBytes_CountsArrivedBytes_NotTheDeclaredLength() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n".utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.bufferedBodyBytes, 0, "a declared length is not memory")
        parser.append([UInt8](repeating: 97, count: 1200))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.bufferedBodyBytes, 1200)
        parser.append([UInt8](repeating: 97, count: 3800) + Array("GET / HTTP/1.1\r\n".utf8))
        XCTAssertEqual(parser.bufferedBodyBytes, 5000, "pipelined bytes after the body are not body")
        XCTAssertEqual(try parser.next()?.body.count, 5000)
        XCTAssertEqual(parser.bufferedBodyBytes, 0)
    }

    func testBufferedBodyBytes_CountsChunkedBytes_AsTheyArrive() throws {
        var parser = HTTPRequestParser()
        parser.append(Array((Self.chunkedHead + "FFFFF\r\n").utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.bufferedBodyBytes, 0, "a chunk size line is not memory")
        XCTAssertEqual(parser.pendingBodyBytes, 0xFFFFF)
        parser.append(Array("abc".utf8))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.bufferedBodyBytes, 3)
    }
}
