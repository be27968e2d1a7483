import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `HTTPResponse.delivery`: the faults a handler can ask of the server — a delay on the loop's
/// timer (no other connection waits), a close or a reset without an answer, a truncated body,
/// a stall mid-body. Each is paired with the same route delivered normally.
final class ServerDeliveryTests: XCTestCase {
    private static let body = Array("0123456789".utf8)

    private static func router() -> Router {
        var router = Router()
        func route(_ path: String, _ delivery: HTTPDelivery, deferred: Bool = false) {
            let answer: @Sendable (HTTPRequest) -> HTTPResponse = { _ in
                var response = HTTPResponse(headers: ["Content-Type": "text/plain"], body: body)
                response.delivery = delivery
                return response
            }
            if deferred {
                router.add(.get, path, deferred: { request in answer(request) })
            } else {
                router.add(.get, path, immediate: { request in answer(request) })
            }
        }
        route("/normal", .normal)
        route("/delayed", HTTPDelivery(delayMilliseconds: 2000))
        route("/delayed-deferred", HTTPDelivery(delayMilliseconds: 300), deferred: true)
        route("/close", HTTPDelivery(cut: .close))
        route("/reset", HTTPDelivery(cut: .reset))
        route("/truncate", HTTPDelivery(cut: .truncate(bodyBytes: 3)))
        route("/truncate-beyond", HTTPDelivery(cut: .truncate(bodyBytes: 99)))
        route("/stall", HTTPDelivery(cut: .stall(bodyBytes: 3)))
        route("/delayed-reset", HTTPDelivery(delayMilliseconds: 200, cut: .reset), deferred: true)
        router.add(.get, "/hello", immediate: { _ in .text("hi") })
        return router
    }

    private static let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n"

    private func start(_ recorder: HTTPExchangeRecorder? = nil) throws -> HTTPServer {
        var configuration = ServerFixture.relaxed
        configuration.observer = recorder
        return try ServerFixture.start(configuration, router: Self.router())
    }

    func testDelay_AnswersLater_WhileAnotherConnectionIsAnsweredAtOnce() throws {
        let recorder = HTTPExchangeRecorder()
        let server = try start(recorder)
        defer { server.stop() }
        let delayed = try ServerFixture.client(server)
        try delayed.request("GET", "/delayed")
        // Another connection's request, sent after, is answered while the first still waits.
        let other = try ServerFixture.client(server)
        XCTAssertEqual(try other.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(delayed.availableNow(), [], "the delayed answer came before the other connection's")
        XCTAssertEqual(try delayed.readResponse().rawText, Self.head + "0123456789")
        // The same connection goes on as usual after a delayed answer.
        XCTAssertEqual(try delayed.roundTrip("GET", "/normal").rawText, Self.head + "0123456789")
        let exchanges = recorder.waitForExchanges(3)
        let waited = exchanges.first { $0.request?.path == "/delayed" }
        XCTAssertGreaterThanOrEqual(waited?.microseconds ?? 0, 2_000_000, "the delay is at least what was asked")
    }

    func testDelay_OfADeferredHandler_AndADelayedReset() throws {
        let server = try start()
        defer { server.stop() }
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/delayed-deferred").rawText, Self.head + "0123456789")
        let client = try ServerFixture.client(server)
        try client.request("GET", "/delayed-reset")
        let (bytes, end) = client.readUntilEnd()
        XCTAssertEqual(bytes, [])
        XCTAssertEqual(end, .reset)
    }

    func testClose_EndsWithoutAnswer_AndNormalTwinAnswers() throws {
        let server = try start()
        defer { server.stop() }
        let twin = try ServerFixture.client(server)
        XCTAssertEqual(try twin.roundTrip("GET", "/normal").rawText, Self.head + "0123456789")
        let client = try ServerFixture.client(server)
        try client.request("GET", "/close")
        let (bytes, end) = client.readUntilEnd()
        XCTAssertEqual(bytes, [])
        XCTAssertEqual(end, .closed)
    }

    func testReset_SendsRST() throws {
        let server = try start()
        defer { server.stop() }
        let client = try ServerFixture.client(server)
        try client.request("GET", "/reset")
        let (bytes, end) = client.readUntilEnd()
        XCTAssertEqual(bytes, [])
        XCTAssertEqual(end, .reset)
    }

    func testTruncate_SendsTheFullLengthButPartOfTheBody_ThenCloses() throws {
        let server = try start()
        defer { server.stop() }
        let client = try ServerFixture.client(server)
        try client.request("GET", "/truncate")
        let (bytes, end) = client.readUntilEnd()
        // The head promises the whole body, as a server that fails mid-body does (no Connection: close).
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), Self.head + "012")
        XCTAssertEqual(end, .closed)
        // A cut beyond the body sends it whole, and still closes.
        let beyond = try ServerFixture.client(server)
        try beyond.request("GET", "/truncate-beyond")
        let whole = beyond.readUntilEnd()
        XCTAssertEqual(String(decoding: whole.bytes, as: UTF8.self).hasSuffix("\r\n\r\n0123456789"), true)
        XCTAssertEqual(whole.end, .closed)
    }

    func testStall_SendsPartOfTheBody_ThenNothing_UntilTheClientLeaves() throws {
        let server = try start()
        defer { server.stop() }
        let client = try ServerFixture.client(server, timeout: 1)
        try client.request("GET", "/stall")
        let (bytes, end) = client.readUntilEnd()
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), Self.head + "012")
        XCTAssertEqual(end, .timedOut, "a stalled answer neither finishes nor closes")
        // Other connections are served meanwhile; the stalled one is let go when its client leaves.
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        client.close()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 }, "open: \(server.openConnections)")
    }

    func testEveryCut_LeavesNoDescriptorBehind() throws {
        let before = try ServerFixture.openDescriptorCount()
        do {
            let server = try start(HTTPExchangeRecorder())
            for path in ["/close", "/reset", "/truncate", "/stall", "/delayed-reset", "/normal"] {
                let client = try ServerFixture.client(server, timeout: 1)
                try client.request("GET", path)
                _ = client.readUntilEnd()
                client.close()
            }
            XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 }, "open: \(server.openConnections)")
            server.stop()
        }
        XCTAssertEqual(try ServerFixture.openDescriptorCount(), before)
    }

    func testObserver_SeesACloseOrResetAsNoStatus_WithTheHandlersNote() throws {
        var router = Router()
        router.add(.get, "/close", immediate: { _ in
            var response = HTTPResponse.text("never sent")
            response.note = "fault f1"
            response.delivery = HTTPDelivery(cut: .close)
            return response
        })
        let recorder = HTTPExchangeRecorder()
        var configuration = ServerFixture.relaxed
        configuration.observer = recorder
        let server = try ServerFixture.start(configuration, router: router)
        defer { server.stop() }
        let client = try ServerFixture.client(server)
        try client.request("GET", "/close")
        _ = client.readUntilEnd()
        let exchange = recorder.waitForExchanges(1).first
        XCTAssertNil(exchange?.status)
        XCTAssertEqual(exchange?.note as? String, "fault f1")
        XCTAssertEqual(exchange?.request?.path, "/close")
    }
}
