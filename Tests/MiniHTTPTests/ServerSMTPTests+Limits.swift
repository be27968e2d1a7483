import Foundation
import Glibc
@testable import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `ServerSMTPTests`: clients that do not read, the limits, shutdown and garbage.
extension ServerSMTPTests {
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
}
