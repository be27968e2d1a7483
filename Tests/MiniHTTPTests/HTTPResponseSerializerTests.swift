import MiniHTTP
import XCTest

final class HTTPResponseSerializerTests: XCTestCase {
    private func text(_ response: HTTPResponse, keepAlive: Bool = true, headOnly: Bool = false, minorVersion: Int = 1) -> String {
        String(decoding: HTTPResponseSerializer.serialize(response, keepAlive: keepAlive, headOnly: headOnly, minorVersion: minorVersion), as: UTF8.self)
    }

    func testSerialize_WritesStatusHeadersLengthAndBody() {
        XCTAssertEqual(text(.text("hi")), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nhi")
    }

    func testSerialize_AddsConnectionClose_WhenNotKeepingAlive() {
        XCTAssertEqual(text(.text("hi"), keepAlive: false),
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
    }

    func testSerialize_KeepsHeaderOrderAndDuplicates() {
        let response = HTTPResponse(status: .found, headers: ["Location": "/next", "Set-Cookie": "a=1", "Set-Cookie": "b=2"])
        XCTAssertEqual(text(response), "HTTP/1.1 302 Found\r\nLocation: /next\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n")
    }

    func testSerialize_ReplacesFramingHeadersTheHandlerSet() {
        let response = HTTPResponse(headers: ["content-length": "99", "X-A": "1", "CONNECTION": "keep-alive", "Transfer-Encoding": "chunked"],
                                    body: Array("abc".utf8))
        XCTAssertEqual(text(response, keepAlive: false), "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
    }

    func testSerialize_OmitsBodyButKeepsLength_WhenHeadOnly() {
        XCTAssertEqual(text(.text("hello"), headOnly: true), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\n")
    }

    func testSerialize_AnswersHTTP10_WithExplicitKeepAlive() {
        XCTAssertEqual(text(.text("hi"), minorVersion: 0),
                       "HTTP/1.0 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi")
        XCTAssertEqual(text(.text("hi"), keepAlive: false, minorVersion: 0),
                       "HTTP/1.0 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
    }

    func testSerialize_OmitsContentLength_For204And304() {
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(204))), "HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(304), headers: ["ETag": "\"1\""])), "HTTP/1.1 304 Not Modified\r\nETag: \"1\"\r\n\r\n")
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(205))), "HTTP/1.1 205 Status 205\r\nContent-Length: 0\r\n\r\n")
    }

    func testSerialize_UsesCustomReasonPhrase() {
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(code: 299, reason: "Fine Anyway"))), "HTTP/1.1 299 Fine Anyway\r\nContent-Length: 0\r\n\r\n")
    }

    func testPlainError_IsCodeReasonAndNewline() {
        XCTAssertEqual(text(.plainError(.headerFieldsTooLarge), keepAlive: false),
                       "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 36\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large\n")
    }

    func testContinueResponse_IsExactInterimLine() {
        XCTAssertEqual(String(decoding: HTTPResponseSerializer.continueResponse, as: UTF8.self), "HTTP/1.1 100 Continue\r\n\r\n")
    }

    func testStatus_KnowsStandardReasons() {
        XCTAssertEqual(HTTPStatus.contentTooLarge.description, "413 Content Too Large")
        XCTAssertEqual(HTTPStatus.versionNotSupported.description, "505 HTTP Version Not Supported")
        XCTAssertEqual(HTTPStatus(599).description, "599 Status 599")
    }

    // MARK: - Responses that cannot be framed become a plain 500 (probe F6, F7)

    private static let plain500 = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\n500 Internal Server Error\n"

    func testSerialize_Sends500_WhenHeaderValueHasCRLF() {
        let response = HTTPResponse(status: .found, headers: ["Location": "https://a.example/x\r\nSet-Cookie: pwned=1"])
        XCTAssertEqual(text(response), Self.plain500)
    }

    func testSerialize_Sends500_WhenHeaderValueHasBareCRBareLFNULOrControlByte() {
        for value in ["a\rb", "a\nb", "a\u{0}b", "a\u{1}b", "a\u{7f}b"] {
            XCTAssertEqual(text(HTTPResponse(headers: ["X-A": value])), Self.plain500, value.debugDescription)
        }
        // Its twins: tab, space, obs-text and every visible character pass unchanged.
        XCTAssertEqual(text(HTTPResponse(headers: ["X-A": "a\tb c caf\u{e9} !\"#()<>@[]{}"])),
                       "HTTP/1.1 200 OK\r\nX-A: a\tb c caf\u{e9} !\"#()<>@[]{}\r\nContent-Length: 0\r\n\r\n")
    }

    func testSerialize_Sends500_WhenHeaderNameIsNotAToken() {
        for name in ["", "X A", "X:A", "X\r\nY", "X(1)", "caf\u{e9}"] {
            XCTAssertEqual(text(HTTPResponse(headers: [name: "1"])), Self.plain500, name.debugDescription)
        }
        XCTAssertEqual(text(HTTPResponse(headers: ["X-A_b.c!#$%&'*+^`|~9": "1"])), "HTTP/1.1 200 OK\r\nX-A_b.c!#$%&'*+^`|~9: 1\r\nContent-Length: 0\r\n\r\n")
    }

    func testSerialize_Sends500_WhenReasonPhraseHasCRLF() {
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(code: 200, reason: "OK\r\nX-Injected: 1"))), Self.plain500)
    }

    func testSerialize_Sends500_When204Or304HasABody() {
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(204), body: Array("<html>".utf8))), Self.plain500)
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(304), body: Array("<html>".utf8))), Self.plain500)
        XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(204), body: Array("x".utf8)), headOnly: true),
                       "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\n\r\n")
    }

    func testSerialize_Sends500_WhenStatusIsInterimOrOutOfRange() {
        for code in [100, 101, 199, 0, 99, 600, 1000, -200] {
            XCTAssertEqual(text(HTTPResponse(status: HTTPStatus(code))), Self.plain500, "\(code)")
        }
    }

    func testSerialize_Sends500_KeepingConnectionAndVersion() {
        let response = HTTPResponse(headers: ["Location": "\n"])
        XCTAssertEqual(text(response, keepAlive: false, minorVersion: 0),
                       "HTTP/1.0 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 26\r\nConnection: close\r\n\r\n500 Internal Server Error\n")
    }
}
