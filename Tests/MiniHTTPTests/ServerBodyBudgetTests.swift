import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The body budget all connections share (probe F11): bodies of 128 KiB at most, 300,000 bytes
/// in all, so two bodies of the limit fit and a third does not.
final class ServerBodyBudgetTests: XCTestCase {
    private var server: HTTPServer!
    private static let bodyLimit = 128 * 1024

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
    private func holding(length: Int, sent: Int) throws -> RawHTTPClient {
        let client = try ServerFixture.client(server)
        try client.send(Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n".utf8) + [UInt8](repeating: 97, count: sent))
        return client
    }

    func testBudget_Answers503AndCloses_WhenBodyWouldPassIt_AndRecoversWhenHoldersClose() throws {
        let first = try holding(length: Self.bodyLimit, sent: 1000)
        let second = try holding(length: Self.bodyLimit, sent: 1000)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.bodyLimit }, "reserved: \(server.reservedBodyBytes)")

        let third = try holding(length: Self.bodyLimit, sent: 0)
        XCTAssertEqual(try third.readResponse().rawText, ServerFixture.protocolError(503))
        XCTAssertTrue(try third.waitForClose())
        XCTAssertEqual(server.reservedBodyBytes, 2 * Self.bodyLimit, "a refused request reserves nothing")

        first.close()
        second.close()
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 0 }, "budget leaked: \(server.reservedBodyBytes)")

        let fourth = try ServerFixture.client(server)
        let answer = try fourth.roundTrip("POST", "/length", body: [UInt8](repeating: 98, count: Self.bodyLimit))
        XCTAssertEqual(answer.rawText, ServerFixture.okText("\(Self.bodyLimit)"))
        XCTAssertEqual(server.reservedBodyBytes, 0, "a finished request returns its reservation")
    }

    func testBudget_Answers503_WhenChunkedBodyGrowsPastIt() throws {
        let first = try holding(length: Self.bodyLimit, sent: 1)
        let second = try holding(length: Self.bodyLimit, sent: 1)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.bodyLimit }, "reserved: \(server.reservedBodyBytes)")

        // 300,000 − 262,144 = 37,856 bytes are left: a first chunk of 20,000 fits, a second does not.
        let chunked = try ServerFixture.client(server)
        let chunk = Array("4E20\r\n".utf8) + [UInt8](repeating: 99, count: 20_000) + Array("\r\n".utf8)
        try chunked.send(Array("POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + chunk)
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.bodyLimit + 20_000 }, "reserved: \(server.reservedBodyBytes)")
        try chunked.send("4E20\r\n")
        XCTAssertEqual(try chunked.readResponse().rawText, ServerFixture.protocolError(503))
        XCTAssertTrue(try chunked.waitForClose())
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 2 * Self.bodyLimit }, "budget leaked: \(server.reservedBodyBytes)")
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
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 5000 }, "reserved: \(server.reservedBodyBytes)")
        ServerFixture.resetOnClose(reset)
        reset.close()
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 0 }, "budget leaked: \(server.reservedBodyBytes)")
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 }, "open: \(server.openConnections)")
    }

    func testBudget_DefaultsTo64MiB() {
        XCTAssertEqual(HTTPServerConfiguration().maxBufferedBodyBytes, 64 * 1024 * 1024)
    }
}
