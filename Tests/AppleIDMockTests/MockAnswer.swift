import MiniHTTP
import MiniHTTPTesting
import XCTest

/// An answer as both modes give it: status, the header fields as the handler wrote them (without
/// the framing the server adds, `Content-Length` and `Connection`), and the body. Exact bytes of
/// the wire (`rawText`, framing) are for live tests, which read `RawHTTPResponse` themselves.
struct MockAnswer: Sendable, HTTPAnswer {
    /// The status code.
    var status: Int
    /// Header fields in order, framing left out.
    var headers: HTTPHeaders
    /// The body (empty for a HEAD, as on the wire).
    var body: [UInt8]
    /// In memory: how the server would deliver it (a fault's delay or cut); live: what arrived, `.normal`.
    var delivery: HTTPDelivery = .normal

    /// An answer from its parts.
    init(status: Int, headers: HTTPHeaders, body: [UInt8], delivery: HTTPDelivery = .normal) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delivery = delivery
    }

    /// What the server would put on the wire for `response` to `method`, framing aside: the
    /// serializer's plain 500 for a response it cannot frame, no body for a HEAD or a 204/304.
    init(inMemory response: HTTPResponse, method: String) {
        let sendable = HTTPResponseSerializer.defect(of: response) == nil ? response : .plainError(.internalServerError)
        let bodiless = method == "HEAD" || sendable.status.code == 204 || sendable.status.code == 304
        self.init(status: sendable.status.code, headers: Self.withoutFraming(sendable.headers), body: bodiless ? [] : sendable.body,
                  delivery: response.delivery)
    }

    /// The answer the raw-socket client read; fails the test when its `Content-Length` does not
    /// frame its body exactly.
    init(live response: RawHTTPResponse, method: String, file: StaticString = #filePath, line: UInt = #line) {
        if method != "HEAD", let length = response.headers["Content-Length"] {
            XCTAssertEqual(length, String(response.body.count), "Content-Length does not frame the body", file: file, line: line)
        }
        self.init(status: response.status, headers: Self.withoutFraming(response.headers), body: response.body)
    }

    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// Header fields the server owns (`HTTPResponseSerializer` replaces any a handler set).
    static func withoutFraming(_ headers: HTTPHeaders) -> HTTPHeaders {
        var kept = HTTPHeaders()
        for field in headers where !["content-length", "connection", "transfer-encoding"].contains(field.name.lowercased()) {
            kept.add(field.name, field.value)
        }
        return kept
    }
}

/// What the shared assertions read of an answer: `MockAnswer` in either mode, or the raw-socket
/// client's `RawHTTPResponse` in the live tests (which also carries its framing).
protocol HTTPAnswer {
    /// The status code.
    var status: Int { get }
    /// Header fields in order.
    var headers: HTTPHeaders { get }
    /// The body.
    var body: [UInt8] { get }
    /// The body as UTF-8 text.
    var text: String { get }
}

extension RawHTTPResponse: HTTPAnswer {}

/// Fails unless `response` has `status`; the message carries its body.
func assertStatus(_ response: some HTTPAnswer, _ status: Int, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, status, message.isEmpty ? response.text : "\(message): \(response.text)", file: file, line: line)
}

/// Fails unless `response` is exactly this status, these header lines (framing aside) in this
/// order, and this body: what the wire carries but for the status line's reason and the framing.
func assertAnswer(_ response: MockAnswer, _ status: Int, headers: [String], body: String, _ message: String = "",
                  file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, status, message, file: file, line: line)
    XCTAssertEqual(response.headers.fields.map { "\($0.name): \($0.value)" }, headers, message, file: file, line: line)
    XCTAssertEqual(response.text, body, message, file: file, line: line)
}
