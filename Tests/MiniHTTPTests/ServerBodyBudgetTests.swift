import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The body budget all connections share (probe F11): bodies of 128 KiB at most, 300,000 bytes
/// in all, so two bodies of nearly the limit fit and a third does not. The budget counts body
/// bytes as they arrive, not the lengths heads declare (probe N2: 64 heads declaring 1 MiB and
/// sending nothing locked every POST out).
final class ServerBodyBudgetTests: XCTestCase {
    private var server: HTTPServer!
    private static let bodyLimit = 128 * 1024
    /// Two holders of this many body bytes leave 300,000 − 262,142 = 37,858 bytes of the budget.
    private static let held = bodyLimit - 1

    override func setUpWithError() throws {
        var configuration = HTTPServerConfiguration.testing(timeouts: 5)
        configuration.limits.maxBodyBytes = Self.bodyLimit
        configuration.maxBufferedBodyBytes = 300_000
        server = try ServerFixture.start(configuration)
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// A connection that sent a head declaring `length` body bytes and the first `sent` of them.
    private func holding(length: Int, sent: Int, on server: HTTPServer? = nil) throws -> RawHTTPClient {
        let client = try ServerFixture.client(server ?? self.server)
        try client.send(Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n".utf8) + [UInt8](repeating: 97, count: sent))
        return client
    }

    func testBudget_IsNotTakenByDeclaredLengths_WhenHeadsArriveWithoutBodies() throws {
        // The default budget (64 MiB) and 1 MiB bodies: 70 heads declare 70 MiB and send nothing.
        var configuration = HTTPServerConfiguration.testing(timeouts: 5)
        configuration.limits.maxBodyBytes = 1024 * 1024
        let server = try ServerFixture.start(configuration)
        defer { server.stop() }
        let holders = try (0..<70).map { _ in try holding(length: 1024 * 1024, sent: 0, on: server) }
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 70 }, "open: \(server.openConnections)")
        XCTAssertEqual(server.reservedBodyBytes, 0, "a declared length reserves nothing")

        let answer = try ServerFixture.client(server).roundTrip("POST", "/length", body: Array("client_id=com.example.web&code=x".utf8))
        XCTAssertEqual(answer.rawText, ServerFixture.okText("32"))
        // The twin: each holder's bytes count once they arrive.
        try holders[0].send([UInt8](repeating: 97, count: 5000))
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 5000 }, "reserved: \(server.reservedBodyBytes)")
        withExtendedLifetime(holders) {}
    }

    func testBudget_Answers503AndCloses_WhenReceivedBodiesWouldPassIt_AndRecoversWhenHoldersClose() throws {
        let first = try holding(length: Self.bodyLimit, sent: Self.held)
        let second = try holding(length: Self.bodyLimit, sent: Self.held)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.held }, "reserved: \(server.reservedBodyBytes)")

        // A declared length alone is no refusal; 40,000 bytes that do not fit are.
        let third = try holding(length: Self.bodyLimit, sent: 0)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 3 }, "open: \(server.openConnections)")
        ServerFixture.sendIgnoringDisconnect(third, [UInt8](repeating: 97, count: 40_000))
        XCTAssertEqual(try third.readResponse().rawText, ServerFixture.protocolError(503))
        XCTAssertTrue(try third.waitForClose())
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.held }, "a refused request keeps nothing: \(server.reservedBodyBytes)")

        first.close()
        second.close()
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 0 }, "budget leaked: \(server.reservedBodyBytes)")

        let fourth = try ServerFixture.client(server)
        let answer = try fourth.roundTrip("POST", "/length", body: [UInt8](repeating: 98, count: Self.bodyLimit))
        XCTAssertEqual(answer.rawText, ServerFixture.okText("\(Self.bodyLimit)"))
        XCTAssertEqual(server.reservedBodyBytes, 0, "a finished request returns its reservation")
    }

    func testBudget_Answers503_WhenChunkedBodyGrowsPastIt() throws {
        let first = try holding(length: Self.bodyLimit, sent: Self.held)
        let second = try holding(length: Self.bodyLimit, sent: Self.held)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.held }, "reserved: \(server.reservedBodyBytes)")

        // 37,858 bytes are left: a first chunk of 20,000 fits, a second does not.
        let chunked = try ServerFixture.client(server)
        let chunk = Array("4E20\r\n".utf8) + [UInt8](repeating: 99, count: 20_000) + Array("\r\n".utf8)
        try chunked.send(Array("POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + chunk)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes > 2 * Self.held + 19_000 }, "reserved: \(server.reservedBodyBytes)")
        ServerFixture.sendIgnoringDisconnect(chunked, chunk)
        XCTAssertEqual(try chunked.readResponse().rawText, ServerFixture.protocolError(503))
        XCTAssertTrue(try chunked.waitForClose())
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.held }, "budget leaked: \(server.reservedBodyBytes)")
        withExtendedLifetime((first, second)) {}
    }

    func testBudget_RefusesExpectContinue_WhenTheDeclaredBodyCannotFitNow() throws {
        let first = try holding(length: Self.bodyLimit, sent: Self.held)
        let second = try holding(length: Self.bodyLimit, sent: Self.held)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.held }, "reserved: \(server.reservedBodyBytes)")
        // Told before it sends the body: 40,000 bytes do not fit, 30,000 do (and get 100 Continue).
        let refused = try ServerFixture.client(server)
        try refused.send("POST /length HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 40000\r\n\r\n")
        XCTAssertEqual(try refused.readResponse().rawText, ServerFixture.protocolError(503))
        let accepted = try ServerFixture.client(server)
        try accepted.send("POST /length HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 30000\r\n\r\n")
        XCTAssertEqual(try accepted.readResponse().status, 100)
        try accepted.send([UInt8](repeating: 97, count: 30_000))
        XCTAssertEqual(try accepted.readResponse().rawText, ServerFixture.okText("30000"))
        withExtendedLifetime((first, second)) {}
    }

    func testBudget_IsReturned_OnEveryWayAConnectionEnds() throws {
        // Answered (by a deferred handler), refused for a framing error mid-body, reset by the client.
        let done = try ServerFixture.client(server)
        XCTAssertEqual(try done.roundTrip("POST", "/echo", body: Array("abc".utf8)).text, "abc")
        let malformed = try ServerFixture.client(server)
        try malformed.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\nzz\r\n")
        XCTAssertEqual(try malformed.readResponse().rawText, ServerFixture.protocolError(400))
        let reset = try holding(length: 5000, sent: 10)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 10 }, "reserved: \(server.reservedBodyBytes)")
        ServerFixture.resetOnClose(reset)
        reset.close()
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 0 }, "budget leaked: \(server.reservedBodyBytes)")
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 }, "open: \(server.openConnections)")
    }

    func testBudget_DefaultsTo64MiB() {
        XCTAssertEqual(HTTPServerConfiguration().maxBufferedBodyBytes, 64 * 1024 * 1024)
    }
}
