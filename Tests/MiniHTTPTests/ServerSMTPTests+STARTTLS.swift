import Foundation
import Glibc
@testable import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `ServerSMTPTests`: STARTTLS, and SMTP's message budget beside HTTP's.
extension ServerSMTPTests {
    // MARK: - STARTTLS

    func testSTARTTLS_UpgradesTheConnection_StopsOfferingIt_AndDeliversOverTLS() throws {
        let handler = SMTPTestHandler()
        let server = try start(handler: handler, tls: true)
        defer { server.stop() }
        let client = try greeted(server)
        try client.send("EHLO client.test\r\n")
        XCTAssertEqual(try client.reply(), Self.ehloReplyWithTLS)
        try client.send("STARTTLS\r\n")
        XCTAssertEqual(try client.reply(), "220 2.0.0 Ready to start TLS\r\n")
        try client.startTLS()
        try client.send("EHLO client.test\r\n")
        XCTAssertEqual(try client.reply(), Self.ehloReply, "STARTTLS is offered once, before TLS")
        try client.send(Self.transaction)
        XCTAssertEqual(try client.replies(4), Self.transactionReplies)
        XCTAssertEqual(handler.messages.map(\.overTLS), [true])
        XCTAssertEqual(handler.messages.map { String(decoding: $0.data, as: UTF8.self) }, [Self.transactionText])

        // The twin: a client of the same server that stays plain delivers a message not over TLS.
        let plain = try greeted(server)
        try plain.send("EHLO client.test\r\n" + Self.transaction + "QUIT\r\n")
        XCTAssertEqual(plain.readUntilEnd().text, Self.ehloReplyWithTLS + Self.transactionReplies + "221 2.0.0 Bye\r\n")
        XCTAssertEqual(handler.messages.map(\.overTLS), [true, false])

        // QUIT over TLS is answered over TLS, then the stream ends.
        let quitting = try greeted(server)
        try quitting.send("EHLO client.test\r\nSTARTTLS\r\n")
        XCTAssertEqual(try quitting.replies(2), Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
        try quitting.startTLS()
        try quitting.send("NOOP\r\nQUIT\r\n")
        XCTAssertEqual(quitting.readUntilEnd().text, Self.ok + "221 2.0.0 Bye\r\n")

        // Shutting down reaches the TLS client over TLS too.
        try client.send("NOOP\r\n")
        XCTAssertEqual(try client.reply(), Self.ok)
        server.stop()
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, Self.shuttingDown)
        XCTAssertEqual(end, .closed)
    }

    func testSTARTTLS_ClientThatEndsItsSendingSide_StillGetsEveryReplyOverTLS() throws {
        // Found by review: over TLS, the end of the client's input closed the connection before
        // the replies to that same burst were written (a delivered message's "250 queued" lost).
        let handler = SMTPTestHandler()
        let server = try start(handler: handler, tls: true)
        defer { server.stop() }
        let client = try greeted(server)
        try client.send("EHLO client.test\r\nSTARTTLS\r\n")
        XCTAssertEqual(try client.replies(2), Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
        try client.startTLS()
        try client.send("EHLO client.test\r\n" + Self.transaction)
        shutdown(client.fd, Int32(SHUT_WR))
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, Self.ehloReply + Self.transactionReplies)
        XCTAssertEqual(end, .closed)
        XCTAssertEqual(handler.messages.count, 1)
        // The twin in plaintext: the same replies, the same close.
        let plain = try greeted(server)
        try plain.send("EHLO client.test\r\n" + Self.transaction)
        shutdown(plain.fd, Int32(SHUT_WR))
        XCTAssertEqual(plain.readUntilEnd().text, Self.ehloReplyWithTLS + Self.transactionReplies)
    }

    func testShutdown_ClosesAClientInTheMiddleOfItsTLSHandshake_AtOnce() throws {
        // Found by review: a client stalled after STARTTLS's 220 held the stop for the whole grace
        // period, and one that finished its handshake during shutdown was served as usual.
        let server = try start(tls: true) { configuration in
            configuration.shutdownGrace = 30
            configuration.smtp.idleTimeout = 60
        }
        let client = try greeted(server)
        try client.send("EHLO client.test\r\nSTARTTLS\r\n")
        XCTAssertEqual(try client.replies(2), Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
        // The handshake never starts: the stop must not wait the 30 s grace for it.
        let stopped = expectation(description: "stopped")
        DispatchQueue.global().async {
            server.stop()
            stopped.fulfill()
        }
        wait(for: [stopped], timeout: 20)
        XCTAssertThrowsError(try client.startTLS(), "the connection was closed, not left to a handshake")
    }

    /// A client greeted and in DATA, having sent `text` of its message.
    func inData(_ server: HTTPServer, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> Wire {
        let client = try greeted(server, file: file, line: line)
        try client.send("EHLO a.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n" + text)
        XCTAssertEqual(try client.replies(4), Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n", file: file, line: line)
        return client
    }

    /// 20,000 bytes of message text.
    static let chunk = String(repeating: String(repeating: "x", count: 98) + "\r\n", count: 200)
    static let storage = "452 4.3.1 mx.test Error: insufficient system storage\r\n"

    func testMessagesBeingReceived_HoldSMTPsOwnBudget_452WhenItRunsOut() throws {
        // Many half-sent messages cannot exhaust memory: what sessions hold counts against
        // SMTP's own budget (96 KiB here: four messages of 20,000 bytes fit, a fifth does not).
        let handler = SMTPTestHandler()
        let server = try start(handler: handler) { $0.smtp.maxBufferedMessageBytes = 96 * 1024 }
        defer { server.stop() }
        let holders = try (0..<4).map { _ in try inData(server, Self.chunk) }
        XCTAssertTrue(ServerFixture.eventually { server.reservedMessageBytes >= 80_000 })
        let fifth = try greeted(server)
        try fifth.send("EHLO b.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n" + Self.chunk)
        let (text, end) = fifth.readUntilEnd()
        XCTAssertEqual(text, Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n" + Self.storage)
        XCTAssertEqual(end, .closed)
        // One finishes; its bytes go back, and the next client's message fits (the twin).
        try holders[0].send(".\r\n")
        XCTAssertEqual(try holders[0].reply(), "250 2.0.0 Ok: queued\r\n")
        let next = try inData(server, Self.chunk + ".\r\nQUIT\r\n")
        XCTAssertEqual(next.readUntilEnd().text, "250 2.0.0 Ok: queued\r\n221 2.0.0 Bye\r\n")
        XCTAssertEqual(handler.messages.count, 2)
        for holder in holders.dropFirst() { holder.close() }
        XCTAssertTrue(ServerFixture.eventually { server.reservedMessageBytes == 0 })
        XCTAssertEqual(server.reservedBodyBytes, 0, "mail never touched HTTP's budget")
    }

    func testASession_HoldsAtMostAQuarterOfTheBudget() throws {
        let handler = SMTPTestHandler()
        let server = try start(handler: handler) { $0.smtp.maxBufferedMessageBytes = 96 * 1024 }
        defer { server.stop() }
        // 30,000 bytes: more than a quarter (24 KiB) of the budget, though the budget has room.
        let greedy = try greeted(server)
        try greedy.send("EHLO b.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n" + Self.chunk + Self.chunk)
        XCTAssertTrue(greedy.readUntilEnd().text.hasSuffix(Self.storage))
        // The twin: 20,000 bytes are taken.
        let modest = try inData(server, Self.chunk + ".\r\n")
        XCTAssertEqual(try modest.reply(), "250 2.0.0 Ok: queued\r\n")
        XCTAssertEqual(handler.messages.count, 1)
    }

    func testHTTPBodies_AreAnswered_WhileMailHoldsAllOfSMTPsBudget() throws {
        // Probe P3: eight mail sessions holding the shared budget made every POST with a body 503.
        let server = try start { configuration in
            configuration.maxBufferedBodyBytes = 64 * 1024
            configuration.smtp.maxBufferedMessageBytes = 96 * 1024
        }
        defer { server.stop() }
        let holders = try (0..<4).map { _ in try inData(server, Self.chunk) }
        XCTAssertTrue(ServerFixture.eventually { server.reservedMessageBytes >= 80_000 })
        let body = [UInt8](repeating: UInt8(ascii: "y"), count: 60_000)
        let answer = try ServerFixture.client(server).roundTrip("POST", "/length", body: body)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.text, "60000")
        // The twin: a body over HTTP's own budget is still refused, by HTTP's rule.
        let over = try ServerFixture.client(server).roundTrip("POST", "/length", body: [UInt8](repeating: 0x79, count: 70_000))
        XCTAssertEqual(over.status, 503)
        for holder in holders { holder.close() }
    }

    func testUnderPressure_ASessionBelowTheMinimumRate_Is421AndLetGo_WhileOneThatSendsIsTaken() throws {
        // Half of a 96 KiB budget held: every window of 10 s a message must bring 10,000 bytes.
        let handler = SMTPTestHandler()
        let server = try start(handler: handler) { configuration in
            configuration.smtp.maxBufferedMessageBytes = 96 * 1024
            configuration.smtp.minDataRate = 1000
            configuration.smtp.dataRateWindow = 10
            configuration.smtp.idleTimeout = 600
            // One loop sees every release before it judges the next session.
            configuration.eventLoopCount = 1
        }
        defer { server.stop() }
        // Four stalled messages hold 80,000 bytes; sessions are let go until less than half is held.
        let stalled = try (0..<4).map { _ in try inData(server, Self.chunk) }
        XCTAssertTrue(ServerFixture.eventually { server.reservedMessageBytes >= 80_000 })
        // The window their chunks came in passes, then one in which nothing comes.
        clock.pass(10, on: server)
        clock.pass(10, on: server)
        XCTAssertTrue(server.reservedMessageBytes > 0 && server.reservedMessageBytes * 2 < 96 * 1024, "\(server.reservedMessageBytes)")
        var outcomes: [String] = []
        for client in stalled {
            client.sendIgnoringDisconnect(Array(".\r\nQUIT\r\n".utf8))
            outcomes.append(client.readUntilEnd().text)
        }
        let tooSlow = "421 4.4.2 mx.test Error: message data too slow while the server is busy\r\n"
        XCTAssertEqual(outcomes.filter { $0 == tooSlow }.count, 2, "\(outcomes)")
        XCTAssertEqual(outcomes.filter { $0 == "250 2.0.0 Ok: queued\r\n221 2.0.0 Bye\r\n" }.count, 2, "\(outcomes)")
        XCTAssertTrue(ServerFixture.eventually { server.reservedMessageBytes == 0 })
        XCTAssertEqual(handler.messages.count, 2)
        // The twin: below half the budget nobody is held to the rate; one message trickled over
        // several windows is taken.
        let slow = try inData(server, Self.chunk)
        for _ in 0..<4 {
            clock.pass(10, on: server)
            try slow.send("y\r\n")
        }
        try slow.send(".\r\n")
        XCTAssertEqual(try slow.reply(), "250 2.0.0 Ok: queued\r\n")
        XCTAssertEqual(handler.messages.count, 3)
    }

    func testDataTimeout_EndsAMessageTrickledInSlowerThanAllowed_ThoughNeverIdle() throws {
        // A byte every 20 s never trips the idle timeout (60 s here); the message's own
        // deadline (100 s from DATA's 354) does.
        let handler = SMTPTestHandler()
        let server = try start(handler: handler) { configuration in
            configuration.smtp.idleTimeout = 60
            configuration.smtp.dataTimeout = 100
        }
        defer { server.stop() }
        let smtpPort = try XCTUnwrap(server.smtpPort)
        let client = try greeted(server)
        try client.send("EHLO a.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n")
        XCTAssertEqual(try client.replies(4), Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n")
        for round in 1...5 {
            try client.send("x")
            XCTAssertTrue(ServerFixture.eventually { ServerFixture.unread(by: smtpPort, fromPort: client.localPort) == 0 })
            clock.pass(20, on: server)
            XCTAssertEqual(server.openConnections, 1, "let go after \(round * 20) s, within the message's 100 s")
        }
        try client.send("x")
        XCTAssertTrue(ServerFixture.eventually { ServerFixture.unread(by: smtpPort, fromPort: client.localPort) == 0 })
        clock.pass(20, on: server)
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, "421 4.4.2 mx.test Error: timeout exceeded\r\n")
        XCTAssertEqual(end, .closed)
        XCTAssertTrue(handler.messages.isEmpty)
        // The twin: a message that ends within its deadline is taken.
        let prompt = try greeted(server)
        try prompt.send("EHLO a.test\r\n" + Self.transaction + "QUIT\r\n")
        XCTAssertEqual(prompt.readUntilEnd().text, Self.ehloReply + Self.transactionReplies + "221 2.0.0 Bye\r\n")
    }

    func testSTARTTLS_NotOfferedAndRefused454_WhenTheServerHasNoTLS() throws {
        let server = try start()
        defer { server.stop() }
        let client = try greeted(server)
        try client.send("EHLO client.test\r\n")
        XCTAssertEqual(try client.reply(), Self.ehloReply)
        try client.send("STARTTLS\r\n")
        XCTAssertEqual(try client.reply(), "454 4.7.0 TLS not available\r\n")
        // The conversation goes on in plaintext.
        try client.send("NOOP\r\n")
        XCTAssertEqual(try client.reply(), Self.ok)
    }

    func testSTARTTLS_ClosesAClient_ThatSendsPlaintextAfterThe220() throws {
        let server = try start(tls: true)
        defer { server.stop() }
        // Upper case (looks like a request line to the TLS layer), lower case, and a bare NOOP.
        for plaintext in ["EHLO client.test\r\n", "ehlo client.test\r\n", "NOOP\r\n"] {
            let client = try greeted(server)
            try client.send("EHLO client.test\r\nSTARTTLS\r\n")
            XCTAssertEqual(try client.replies(2), Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
            try client.send(plaintext)
            let (text, end) = client.readUntilEnd()
            XCTAssertEqual(text, "", "nothing sent in the clear after 220 is answered: \(plaintext)")
            XCTAssertNotEqual(end, .timedOut, plaintext)
        }
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
        // The twin: a TLS handshake after the 220 is served.
        let client = try greeted(server)
        try client.send("EHLO client.test\r\nSTARTTLS\r\n")
        XCTAssertEqual(try client.replies(2), Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
        try client.startTLS()
        try client.send("NOOP\r\n")
        XCTAssertEqual(try client.reply(), Self.ok)
    }
}
