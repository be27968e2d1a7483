import MiniHTTP
import MiniHTTPTesting
import XCTest

final class ServerShutdownTests: XCTestCase {
    func testShutdown_FinishesInFlightRequestWithConnectionClose_AndRefusesNewConnections() throws {
        let gate = Gate()
        let server = try ServerFixture.start(gate: gate)
        let port = server.port
        let inFlight = try ServerFixture.client(server)
        try inFlight.request("GET", "/gated")
        XCTAssertTrue(gate.waitUntilEntered(), "the deferred handler never started")
        let idle = try ServerFixture.client(server)
        XCTAssertEqual(try idle.roundTrip("GET", "/hello").text, "hi")

        server.shutdown()

        XCTAssertTrue(try idle.waitForClose(), "idle keep-alive connection left open")
        ServerFixture.assertRefused(port: port)
        gate.open()
        XCTAssertEqual(try inFlight.readResponse().rawText,
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\nConnection: close\r\n\r\ngated")
        XCTAssertTrue(try inFlight.waitForClose())
        server.waitUntilStopped()
        ServerFixture.assertRefused(port: port)
        XCTAssertEqual(server.openConnections, 0)
    }

    func testShutdown_AnswersPipelinedRequestInFlight_ButNotTheOnesBehindIt() throws {
        let gate = Gate()
        let server = try ServerFixture.start(gate: gate)
        let client = try ServerFixture.client(server)
        try client.send("GET /gated HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(gate.waitUntilEntered())
        server.shutdown()
        gate.open()
        XCTAssertEqual(try client.readResponse().headers["Connection"], "close")
        XCTAssertTrue(try client.waitForClose())
        server.waitUntilStopped()
    }

    func testStop_ReturnsPromptly_WhenNoRequestIsInFlight() throws {
        let server = try ServerFixture.start()
        let idle = try ServerFixture.client(server)
        XCTAssertEqual(try idle.roundTrip("GET", "/hello").text, "hi")
        let silent = try ServerFixture.client(server)
        server.stop()
        XCTAssertTrue(try idle.waitForClose())
        XCTAssertTrue(try silent.waitForClose())
        ServerFixture.assertRefused(port: server.port)
    }

    func testShutdown_IsSafeToCallTwice() throws {
        let server = try ServerFixture.start()
        server.shutdown()
        server.shutdown()
        server.waitUntilStopped()
        server.stop()
        ServerFixture.assertRefused(port: server.port)
    }

    func testStop_InAsyncCode_LetsTheRequestInFlightFinish_ThenRefusesNewConnections() async throws {
        let gate = Gate()
        let server = try ServerFixture.start(gate: gate)
        let port = server.port
        let inFlight = try ServerFixture.client(server)
        try inFlight.request("GET", "/gated")
        while !gate.hasEntered { try await Task.sleep(for: .milliseconds(5)) }
        // Draining before the handler ends: its answer closes the connection.
        server.shutdown()
        gate.open()
        await server.stop()
        // Answered before the loops ended; the bytes wait in the client's socket.
        XCTAssertEqual(try inFlight.readResponse().rawText,
                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\nConnection: close\r\n\r\ngated")
        ServerFixture.assertRefused(port: port)
        XCTAssertEqual(server.openConnections, 0)
    }

    func testStopped_ResumesAsyncWaiter() async throws {
        let server = try ServerFixture.start()
        server.shutdown()
        await server.stopped()
        XCTAssertEqual(server.openConnections, 0)
    }
}
