import Foundation
import Glibc
@testable import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// SMTP on the server's event loops (`HTTPServer.start(configuration:routes:smtp:)`), live on port 0 with a raw
/// client: exact reply bytes, the handler's verdicts, STARTTLS, the idle and write timeouts, a
/// client that never reads, the connection limit HTTP and SMTP share, and shutdown. The protocol
/// itself is `SMTPSessionTests`' subject; these tests are about the connection that carries it.
/// The servers run on a clock only the test moves (`ManualServerClock`): a test about a timeout
/// moves it past the limit, or short of it for the twin, and sweeps; then it waits for what the
/// client sees (a 421, the end of the stream). No test waits for time to pass.
final class ServerSMTPTests: XCTestCase {
    private let clock = ManualServerClock()
    private static let greeting = "220 mx.test ESMTP AppleIDMock\r\n"
    private static let ehloReply = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n"
    private static let ehloReplyWithTLS = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250-ENHANCEDSTATUSCODES\r\n250 STARTTLS\r\n"
    private static let ok = "250 2.0.0 Ok\r\n"
    private static let shuttingDown = "421 4.3.2 mx.test Service shutting down\r\n"

    /// One message's commands after EHLO, with a stuffed dot, and the replies to them.
    private static let transaction = "MAIL FROM:<alice@client.test>\r\nRCPT TO:<bob@mx.test>\r\nDATA\r\n"
        + "Subject: hi\r\n\r\n..leading dot\r\nbody\r\n.\r\n"
    private static let transactionReplies = "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n"
    /// The text `transaction` delivers: dot-unstuffed, without the final dot.
    private static let transactionText = "Subject: hi\r\n\r\n.leading dot\r\nbody\r\n"

    /// A server with HTTP (`ServerFixture`'s routes, relaxed timeouts) and SMTP for `handler` as
    /// `mx.test`, both on ephemeral ports; `adjust` changes either before it starts.
    private func start(handler: SMTPTestHandler = SMTPTestHandler(), tls: Bool = false,
                       _ adjust: (inout Ports) -> Void = { _ in }) throws -> HTTPServer {
        var smtp = SMTPServerConfiguration(handler: handler)
        smtp.port = 0
        smtp.hostname = "mx.test"
        smtp.idleTimeout = 30
        smtp.writeTimeout = 30
        if tls { smtp.tls = try TLSFixture.context() }
        var configuration = Ports(http: ServerFixture.relaxed, smtp: smtp)
        configuration.clock = clock.clock
        adjust(&configuration)
        return try HTTPServer.start(configuration: configuration.http, routes: ServerFixture.router(gate: Gate()).build(), smtp: configuration.smtp)
    }

    /// Both ports' configurations; the server's own fields read and write through to `http`.
    @dynamicMemberLookup
    struct Ports {
        var http: HTTPServerConfiguration
        var smtp: SMTPServerConfiguration

        subscript<Value>(dynamicMember field: WritableKeyPath<HTTPServerConfiguration, Value>) -> Value {
            get { http[keyPath: field] }
            set { http[keyPath: field] = newValue }
        }
    }

    private func connect(_ server: HTTPServer, receiveBuffer: Int32? = nil) throws -> Wire {
        try Wire(port: try XCTUnwrap(server.smtpPort), receiveBuffer: receiveBuffer)
    }

    /// A client that has been greeted.
    private func greeted(_ server: HTTPServer, file: StaticString = #filePath, line: UInt = #line) throws -> Wire {
        let client = try connect(server)
        XCTAssertEqual(try client.reply(), Self.greeting, file: file, line: line)
        return client
    }

    // MARK: - A conversation

    func testConversation_GreetsAndDeliversAMessage_WithExactReplies() throws {
        let handler = SMTPTestHandler()
        let server = try start(handler: handler)
        defer { server.stop() }
        XCTAssertNotEqual(server.smtpPort, server.port)
        let client = try greeted(server)
        try client.send("EHLO client.test\r\n")
        XCTAssertEqual(try client.reply(), Self.ehloReply)
        try client.send("MAIL FROM:<alice@client.test>\r\n")
        XCTAssertEqual(try client.reply(), "250 2.1.0 Ok\r\n")
        try client.send("RCPT TO:<bob@mx.test>\r\n")
        XCTAssertEqual(try client.reply(), "250 2.1.5 Ok\r\n")
        try client.send("DATA\r\n")
        XCTAssertEqual(try client.reply(), "354 End data with <CR><LF>.<CR><LF>\r\n")
        XCTAssertEqual(handler.messages.count, 0)
        try client.send("Subject: hi\r\n\r\n..leading dot\r\nbody\r\n.\r\n")
        XCTAssertEqual(try client.reply(), "250 2.0.0 Ok: queued\r\n")
        try client.send("QUIT\r\n")
        XCTAssertEqual(try client.reply(), "221 2.0.0 Bye\r\n")
        let (rest, end) = client.readUntilEnd()
        XCTAssertEqual(rest, "")
        XCTAssertEqual(end, .closed)

        let message = try XCTUnwrap(handler.messages.first)
        XCTAssertEqual(handler.messages.count, 1)
        XCTAssertEqual(message.heloName, "client.test")
        XCTAssertEqual(message.sender, "alice@client.test")
        XCTAssertEqual(message.recipients, ["bob@mx.test"])
        XCTAssertEqual(String(decoding: message.data, as: UTF8.self), Self.transactionText)
        XCTAssertFalse(message.overTLS)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    func testConversation_PipelinedInOneWrite_GetsTheSameRepliesAndDelivers() throws {
        let handler = SMTPTestHandler()
        let server = try start(handler: handler)
        defer { server.stop() }
        let client = try connect(server)
        // All in one write, before the greeting is even read: more than RFC 2920 §3.1 lets a client
        // group, and still every command is answered, in order, as if sent one at a time.
        try client.send("EHLO client.test\r\n" + Self.transaction + Self.transaction + "QUIT\r\n")
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, Self.greeting + Self.ehloReply + Self.transactionReplies + Self.transactionReplies + "221 2.0.0 Bye\r\n")
        XCTAssertEqual(end, .closed)
        XCTAssertEqual(handler.messages.map { String(decoding: $0.data, as: UTF8.self) }, [Self.transactionText, Self.transactionText])
        // The twin: the same conversation without its QUIT is answered alike and left open.
        let open = try connect(server)
        try open.send("EHLO client.test\r\n" + Self.transaction)
        XCTAssertEqual(try open.replies(6), Self.greeting + Self.ehloReply + Self.transactionReplies)
        try open.send("NOOP\r\n")
        XCTAssertEqual(try open.reply(), Self.ok)
    }

    func testHTTP_StillAnswersOnTheSameLoop_WhileAnSMTPClientIsMidData() throws {
        let handler = SMTPTestHandler()
        let server = try start(handler: handler) { $0.eventLoopCount = 1 }
        defer { server.stop() }
        let smtp = try greeted(server)
        try smtp.send("EHLO client.test\r\nMAIL FROM:<alice@client.test>\r\nRCPT TO:<bob@mx.test>\r\nDATA\r\nSubject: half\r\n")
        XCTAssertEqual(try smtp.replies(4), Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n")
        // One loop carries both ports: the HTTP request is answered while the message is open.
        let http = try ServerFixture.client(server)
        XCTAssertEqual(try http.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(handler.messages.count, 0, "delivered before its final dot")
        try smtp.send("\r\nrest\r\n.\r\n")
        XCTAssertEqual(try smtp.reply(), "250 2.0.0 Ok: queued\r\n")
        XCTAssertEqual(handler.messages.map { String(decoding: $0.data, as: UTF8.self) }, ["Subject: half\r\n\r\nrest\r\n"])
        XCTAssertEqual(try http.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
    }

    // MARK: - The handler's verdicts

    func testHandlerRefusals_PassThroughVerbatim_AndAcceptedTwinsAreDelivered() throws {
        var rules = SMTPTestHandler.Rules()
        rules.senders["spammer@bad.test"] = SMTPReply(code: 554, lines: ["5.7.1 Sender refused", "5.7.1 see https://mx.test/why"])
        rules.recipients["nobody@mx.test"] = SMTPReply(550, "5.1.1", "<nobody@mx.test>: Recipient address rejected: User unknown")
        let handler = SMTPTestHandler(rules)
        let server = try start(handler: handler)
        defer { server.stop() }
        let client = try greeted(server)
        try client.send("EHLO client.test\r\n")
        XCTAssertEqual(try client.reply(), Self.ehloReply)
        try client.send("MAIL FROM:<spammer@bad.test>\r\n")
        XCTAssertEqual(try client.reply(), "554-5.7.1 Sender refused\r\n554 5.7.1 see https://mx.test/why\r\n")
        try client.send("MAIL FROM:<alice@client.test>\r\n")
        XCTAssertEqual(try client.reply(), "250 2.1.0 Ok\r\n")
        try client.send("RCPT TO:<nobody@mx.test>\r\n")
        XCTAssertEqual(try client.reply(), "550 5.1.1 <nobody@mx.test>: Recipient address rejected: User unknown\r\n")
        try client.send("RCPT TO:<bob@mx.test>\r\n")
        XCTAssertEqual(try client.reply(), "250 2.1.5 Ok\r\n")
        try client.send("DATA\r\nhello\r\n.\r\n")
        XCTAssertEqual(try client.replies(2), "354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n")
        XCTAssertEqual(handler.asked, ["sender spammer@bad.test helo client.test", "sender alice@client.test helo client.test",
                                       "recipient nobody@mx.test from alice@client.test", "recipient bob@mx.test from alice@client.test"])
        XCTAssertEqual(handler.messages.map(\.recipients), [["bob@mx.test"]])
    }

    // MARK: - Idle timeout

    func testIdleTimeout_Answers421AndCloses_WhenTheClientIsSilent() throws {
        let server = try start()
        defer { server.stop() }
        let smtpPort = try XCTUnwrap(server.smtpPort)
        let client = try greeted(server)
        // The twin first: short of the 30 s, the client is kept.
        clock.pass(29, on: server)
        XCTAssertEqual(server.openConnections, 1)
        clock.pass(2, on: server)
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, "421 4.4.2 mx.test Error: timeout exceeded\r\n")
        XCTAssertEqual(end, .closed)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
        // Silence in the middle of a message counts the same.
        let midData = try greeted(server)
        try midData.send("EHLO client.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\npart of a line")
        XCTAssertEqual(try midData.replies(4), Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n")
        XCTAssertTrue(ServerFixture.eventually { ServerFixture.unread(by: smtpPort, fromPort: midData.localPort) == 0 })
        clock.pass(31, on: server)
        XCTAssertEqual(midData.readUntilEnd().text, "421 4.4.2 mx.test Error: timeout exceeded\r\n")
    }

    func testIdleTimeout_NotApplied_WhenTheClientKeepsSendingNOOPs() throws {
        let server = try start()
        defer { server.stop() }
        let client = try greeted(server)
        // A NOOP every 10 s for 200 s: each gap is well inside the 30 s timeout, the whole is not.
        for round in 0..<20 {
            try client.send("NOOP\r\n")
            XCTAssertEqual(try client.reply(), Self.ok, "round \(round)")
            clock.pass(10, on: server)
        }
        try client.send("QUIT\r\n")
        XCTAssertEqual(client.readUntilEnd().text, "221 2.0.0 Bye\r\n")
    }

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
    private func inData(_ server: HTTPServer, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> Wire {
        let client = try greeted(server, file: file, line: line)
        try client.send("EHLO a.test\r\nMAIL FROM:<a@client.test>\r\nRCPT TO:<b@mx.test>\r\nDATA\r\n" + text)
        XCTAssertEqual(try client.replies(4), Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n", file: file, line: line)
        return client
    }

    /// 20,000 bytes of message text.
    private static let chunk = String(repeating: String(repeating: "x", count: 98) + "\r\n", count: 200)
    private static let storage = "452 4.3.1 mx.test Error: insufficient system storage\r\n"

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

    // MARK: - Clients that do not read

    func testNOOPFlood_FromAClientThatNeverReads_IsNoLongerRead_AndOthersAreServed() throws {
        // Timeouts far off: the server must stop reading the client on its own, not drop it.
        let server = try start {
            $0.smtp.writeTimeout = 30
            $0.smtp.idleTimeout = 30
        }
        defer { server.stop() }
        let smtpPort = try XCTUnwrap(server.smtpPort)
        let baseline = try ServerFixture.openDescriptorCount()
        // A small receive buffer, so few replies fit on the client's side.
        let flooder = try connect(server, receiveBuffer: 4096)
        XCTAssertEqual(try flooder.reply(), Self.greeting)
        let flood = flooder.flood(Array(String(repeating: "NOOP\r\n", count: 8192).utf8), upTo: 64 << 20) {
            ServerFixture.tcpQueues(localPort: smtpPort, remotePort: flooder.localPort)?.receive
        }
        XCTAssertTrue(flood.stalled, "the server kept reading a client that reads no replies (\(flood.sent) bytes sent)")
        // What the server took in: what was sent, less what waits in either kernel.
        let serverSide = try XCTUnwrap(ServerFixture.tcpQueues(localPort: smtpPort, remotePort: flooder.localPort))
        let clientSide = try XCTUnwrap(ServerFixture.tcpQueues(localPort: flooder.localPort, remotePort: smtpPort))
        let consumed = flood.sent - serverSide.receive - clientSide.send
        XCTAssertLessThan(consumed, 4 << 20, "bytes the server read from a client whose replies cannot leave")

        // Meanwhile others are served on both ports.
        let other = try greeted(server)
        try other.send("EHLO client.test\r\nNOOP\r\n")
        XCTAssertEqual(try other.replies(2), Self.ehloReply + Self.ok)
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        try other.send("QUIT\r\n")
        XCTAssertEqual(other.readUntilEnd().text, "221 2.0.0 Bye\r\n")
        other.close()
        flooder.close()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 }, "open: \(server.openConnections)")
        XCTAssertTrue(ServerFixture.eventually { (try? ServerFixture.openDescriptorCount()) == baseline },
                      "descriptors: \((try? ServerFixture.openDescriptorCount()) ?? -1), before: \(baseline)")
    }

    func testWriteTimeout_DropsAClientWhoseRepliesCannotLeave() throws {
        let server = try start {
            $0.smtp.writeTimeout = 30
            $0.smtp.idleTimeout = 600  // only the write timeout may end it
        }
        defer { server.stop() }
        let smtpPort = try XCTUnwrap(server.smtpPort)
        let flooder = try connect(server, receiveBuffer: 4096)
        XCTAssertEqual(try flooder.reply(), Self.greeting)
        // HELP: a long reply to a short command fills the socket buffers sooner than NOOP does.
        let help = "214 2.0.0 Commands: EHLO HELO MAIL RCPT DATA RSET NOOP QUIT VRFY HELP STARTTLS\r\n"
        let flood = flooder.flood(Array(String(repeating: "HELP\r\n", count: 8192).utf8), upTo: 64 << 20) {
            ServerFixture.tcpQueues(localPort: smtpPort, remotePort: flooder.localPort)?.receive
        }
        XCTAssertTrue(flood.stalled, "the replies never filled the sockets (\(flood.sent) bytes sent)")
        // The loop has stopped reading the client (its replies wait to leave) when what waits
        // unread stays the same across two of its turns: epoll is level-triggered, so a loop that
        // still wanted input would have read some before running the second sweep.
        XCTAssertTrue(ServerFixture.eventually {
            let before = ServerFixture.unread(by: smtpPort, fromPort: flooder.localPort)
            server.sweep()
            server.sweep()
            return before > 0 && before != .max && before == ServerFixture.unread(by: smtpPort, fromPort: flooder.localPort)
        }, "the server kept reading a client whose replies cannot leave")
        // Short of the write timeout the client is kept; past it, only the server can end the
        // connection (the client still holds its socket).
        clock.pass(29, on: server)
        XCTAssertEqual(server.openConnections, 1, "dropped short of the write timeout")
        clock.pass(2, on: server)
        XCTAssertEqual(server.openConnections, 0, "the server kept a client that reads nothing")
        let (text, end) = flooder.readUntilEnd()
        XCTAssertTrue(text.hasPrefix(help + help), String(text.prefix(200)))
        XCTAssertNotEqual(end, .timedOut)
        // The twin: a client that reads its replies as they come is not dropped, however long it stays.
        let reader = try greeted(server)
        for _ in 0..<20 {
            try reader.send(String(repeating: "HELP\r\n", count: 200))
            XCTAssertEqual(try reader.replies(200), String(repeating: help, count: 200))
            clock.pass(10, on: server)
        }
        XCTAssertEqual(server.openConnections, 1)
    }

    // MARK: - Limits, shutdown, garbage

    func testSMTPSessions_PastTheirOwnLimit_Are421AndLetGo_WhileHTTPIsServed() throws {
        let server = try start { $0.smtp.maxSessions = 2 }
        defer { server.stop() }
        let holders = try (0..<2).map { _ in try greeted(server) }
        let third = try connect(server)
        XCTAssertEqual(third.readUntilEnd().text, "421 4.7.0 mx.test Error: too many connections\r\n")
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi", "HTTP keeps its connections")
        // The twin: once one leaves, the next is greeted.
        try holders[0].send("QUIT\r\n")
        XCTAssertEqual(holders[0].readUntilEnd().text, "221 2.0.0 Bye\r\n")
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 })
        let next = try greeted(server)
        try next.send("NOOP\r\n")
        XCTAssertEqual(try next.reply(), Self.ok)
    }

    func testConnectionLimit_IsSharedByHTTPAndSMTP() throws {
        let server = try start { $0.maxConnections = 2 }
        defer { server.stop() }
        XCTAssertEqual(server.maxConnections, 2)
        let http = try ServerFixture.client(server)
        XCTAssertEqual(try http.roundTrip("GET", "/hello").text, "hi")
        let smtp = try greeted(server)
        XCTAssertEqual(server.openConnections, 2)
        // Full: a third client of either kind is closed without a word.
        let refusedSMTP = try connect(server)
        XCTAssertEqual(refusedSMTP.readUntilEnd().text, "", "greeted beyond maxConnections")
        let refusedHTTP = try ServerFixture.client(server)
        XCTAssertEqual(refusedHTTP.readUntilEnd().bytes, [])
        // The twin: once the SMTP client leaves, its slot serves a new one (the HTTP client stays).
        try smtp.send("QUIT\r\n")
        XCTAssertEqual(smtp.readUntilEnd().text, "221 2.0.0 Bye\r\n")
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 }, "open: \(server.openConnections)")
        let next = try greeted(server)
        try next.send("NOOP\r\n")
        XCTAssertEqual(try next.reply(), Self.ok)
        XCTAssertEqual(try http.roundTrip("GET", "/hello").text, "hi")
    }

    func testShutdown_TellsSMTPClients421_ClosesThem_AndReleasesEveryDescriptor() throws {
        let warmUp = try start()
        _ = try greeted(warmUp)
        warmUp.stop()
        let before = try ServerFixture.openDescriptorCount()

        let server = try start()
        let smtpPort = try XCTUnwrap(server.smtpPort)
        let idle = try greeted(server)
        let inTransaction = try greeted(server)
        try inTransaction.send("EHLO client.test\r\nMAIL FROM:<alice@client.test>\r\n")
        XCTAssertEqual(try inTransaction.replies(2), Self.ehloReply + "250 2.1.0 Ok\r\n")
        server.stop()
        for client in [idle, inTransaction] {
            let (text, end) = client.readUntilEnd()
            XCTAssertEqual(text, Self.shuttingDown)
            XCTAssertEqual(end, .closed)
            client.close()
        }
        ServerFixture.assertRefused(port: smtpPort)
        XCTAssertEqual(try ServerFixture.openDescriptorCount(), before)
        withExtendedLifetime(server) {}
    }

    func testGarbage_IsAnsweredAsTheSessionAnswersIt_AndTheServerKeepsServing() throws {
        let server = try start()
        defer { server.stop() }
        let client = try greeted(server)
        try client.send("NO\0OP\r\n")
        XCTAssertEqual(try client.reply(), "500 5.5.2 Error: bad syntax\r\n")
        try client.send("NOOP " + String(repeating: "x", count: 10_000) + "\r\n")
        XCTAssertEqual(try client.reply(), "500 5.5.2 Error: line too long\r\n")
        // The twins: the same commands, well formed, are answered.
        try client.send("NOOP\r\nNOOP " + String(repeating: "x", count: 400) + "\r\n")
        XCTAssertEqual(try client.replies(2), Self.ok + Self.ok)
        try client.send("NOOP\nNOOP\r\n")
        let (text, end) = client.readUntilEnd()
        XCTAssertEqual(text, "521 5.5.2 mx.test Error: bare <LF> received\r\n")
        XCTAssertNotEqual(end, .timedOut)

        // Pseudo-random bytes in pseudo-random pieces get what a session given the same bytes says.
        var random = SplitMix(seed: 0x5EED)
        for round in 0..<20 {
            var session = SMTPSession(hostname: "mx.test", limits: SMTPLimits(), tlsAvailable: false, handler: SMTPTestHandler())
            var expected = session.greeting
            var pieces: [[UInt8]] = []
            var closed = false
            while !closed && pieces.count < 40 {
                let piece = (0..<Int(random.next() % 300 + 1)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let output = piece.withUnsafeBytes { session.receive($0) }
                expected += output.bytes
                pieces.append(piece)
                closed = output.action == .close
            }
            if !closed {
                pieces.append(Array("\r\nQUIT\r\n".utf8))
                expected += pieces.last!.withUnsafeBytes { session.receive($0) }.bytes
            }
            let garbage = try connect(server)
            for piece in pieces { garbage.sendIgnoringDisconnect(piece) }
            let (text, end) = garbage.readUntilEnd()
            XCTAssertEqual(text, String(decoding: expected, as: UTF8.self), "round \(round)")
            XCTAssertNotEqual(end, .timedOut, "round \(round)")
        }
        // Still serving.
        let after = try greeted(server)
        try after.send("EHLO client.test\r\n" + Self.transaction + "QUIT\r\n")
        XCTAssertEqual(after.readUntilEnd().text, Self.ehloReply + Self.transactionReplies + "221 2.0.0 Bye\r\n")
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    // MARK: - Helpers

    /// SplitMix64: a seeded generator, so a failing round can be replayed.
    private struct SplitMix {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A blocking SMTP client for these tests: exact bytes out, whole replies in, plaintext or,
    /// after `startTLS()`, over TLS. Every read gives up after `timeout` so a test never hangs.
    private final class Wire {
        /// What went wrong.
        enum Failure: Error {
            case system(String, Int32)
            case closed(received: String)
            case timedOut(received: String)
            case tls(String)
        }

        /// How a stream ended for `readUntilEnd`.
        enum End: Equatable {
            case closed, reset, timedOut
        }

        let fd: Int32
        private let timeout: Double
        private var buffer: [UInt8] = []
        private var tls: TLSClientSession?
        private var isClosed = false

        /// Connects to 127.0.0.1:`port`; `receiveBuffer` sets SO_RCVBUF before connecting.
        init(port: Int, timeout: Double = 5, receiveBuffer: Int32? = nil) throws {
            self.timeout = timeout
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw Failure.system("socket", errno) }
            var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            if var size = receiveBuffer {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if result != 0 {
                let code = errno
                Glibc.close(fd)
                throw Failure.system("connect", code)
            }
        }

        deinit { close() }

        /// The socket's local port.
        var localPort: Int {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return Int(UInt16(bigEndian: address.sin_port))
        }

        private var deadline: UInt64 { Syscall.monotonicNanoseconds() + UInt64(timeout * 1e9) }

        /// Closes the socket.
        func close() {
            guard !isClosed else { return }
            isClosed = true
            tls = nil
            Glibc.close(fd)
        }

        /// Sends a string's UTF-8 bytes.
        func send(_ text: String) throws {
            try send(Array(text.utf8))
        }

        /// Sends all of `bytes`, through TLS once it is on.
        func send(_ bytes: [UInt8]) throws {
            if let tls {
                do {
                    try tls.write(bytes, deadline: deadline)
                } catch {
                    throw Failure.tls("\(error)")
                }
                return
            }
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Failure.system("send", errno)
                }
                sent += count
            }
        }

        /// Sends and ignores a reset or broken pipe: the server may close before it has read all.
        func sendIgnoringDisconnect(_ bytes: [UInt8]) {
            do {
                try send(bytes)
            } catch Failure.system(_, let code) where code == EPIPE || code == ECONNRESET {
                return
            } catch {
                XCTFail("send failed: \(error)")
            }
        }

        /// Sends `pattern` over and over without blocking and without reading, until `upTo` bytes
        /// are sent, the server ends the connection, or the client cannot send and the server's
        /// unread bytes (`unread`) stay the same over 100 ms while it cannot: the server no longer
        /// reads. `pattern` is whole commands; a partial send resumes mid-pattern.
        func flood(_ pattern: [UInt8], upTo limit: Int, unread: () -> Int?) -> (sent: Int, stalled: Bool) {
            var sent = 0
            var lastUnread: Int?
            while sent < limit {
                let offset = sent % pattern.count
                let count = pattern.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if count > 0 {
                    sent += count
                    lastUnread = nil
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                guard count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else { return (sent, false) }
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&entry, 1, 100) > 0 {
                    if entry.revents & Int16(POLLOUT) != 0 { continue }
                    return (sent, false)  // an error or hang-up: the server closed
                }
                let now = unread()
                if let now, now > 0, now == lastUnread { return (sent, true) }
                lastUnread = now
            }
            return (sent, false)
        }

        /// Starts TLS on the connection (after the server's 220), trusting the test CA.
        func startTLS() throws {
            XCTAssertEqual(buffer, [], "bytes read before the handshake")
            do {
                tls = try TLSClientSession(fd: fd, host: "127.0.0.1", caFile: TLSFixture.files.ca, deadline: deadline)
            } catch {
                throw Failure.tls("\(error)")
            }
        }

        /// Reads one whole reply, every line of it.
        func reply() throws -> String {
            try replies(1)
        }

        /// Reads `count` whole replies, concatenated.
        func replies(_ count: Int) throws -> String {
            var end = 0
            var found = 0
            while found < count {
                if let next = Self.replyEnd(in: buffer, from: end) {
                    end = next
                    found += 1
                    continue
                }
                switch try fill() {
                case .some(0): throw Failure.closed(received: String(decoding: buffer, as: UTF8.self))
                case .some: continue
                case .none: throw Failure.timedOut(received: String(decoding: buffer, as: UTF8.self))
                }
            }
            defer { buffer.removeFirst(end) }
            return String(decoding: buffer[0..<end], as: UTF8.self)
        }

        /// Reads until the stream ends or stays quiet for the timeout: every byte unread, and how.
        func readUntilEnd() -> (text: String, end: End) {
            var end = End.closed
            while true {
                do {
                    guard let count = try fill() else {
                        end = .timedOut
                        break
                    }
                    if count == 0 { break }
                } catch {
                    end = .reset
                    break
                }
            }
            defer { buffer.removeAll() }
            return (String(decoding: buffer, as: UTF8.self), end)
        }

        /// Reads once into the buffer: the count, 0 at the end of the stream, nil after the
        /// timeout; throws on a reset.
        private func fill() throws -> Int? {
            if let tls {
                let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
                defer { scratch.deallocate() }
                do {
                    let count = try tls.read(into: scratch, deadline: deadline)
                    buffer.append(contentsOf: scratch[0..<count])
                    return count
                } catch {
                    if case .timeout = error { return nil }
                    throw Failure.tls("\(error)")
                }
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count >= 0 {
                    buffer += chunk[0..<count]
                    return count
                }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
                throw Failure.system("recv", errno)
            }
        }

        /// The index after the last line of the reply that starts at `start`, when it is whole:
        /// a reply ends with a line whose code is followed by a space (RFC 5321 §4.2.1).
        private static func replyEnd(in bytes: [UInt8], from start: Int) -> Int? {
            var lineStart = start
            var index = start
            while index + 1 < bytes.count {
                if bytes[index] == 13 && bytes[index + 1] == 10 {
                    let lineEnd = index + 2
                    if lineEnd - lineStart < 6 || bytes[lineStart + 3] != UInt8(ascii: "-") { return lineEnd }
                    lineStart = lineEnd
                    index = lineEnd
                    continue
                }
                index += 1
            }
            return nil
        }
    }
}
