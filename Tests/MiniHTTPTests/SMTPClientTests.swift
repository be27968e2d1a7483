@testable import MiniHTTP
import XCTest

/// `SMTPClient` against `SMTPSession` over loopback, against servers that misbehave, and its
/// pure parts (reply reading, dot-stuffing).
final class SMTPClientTests: XCTestCase {
    private static func client(_ server: SMTPTestServer, timeout: Double = 5) -> SMTPClient {
        var client = SMTPClient(host: "127.0.0.1", port: server.port)
        client.heloName = "client.test"
        client.commandTimeout = timeout
        return client
    }

    /// What the client sent, as text.
    private static func sent(_ server: SMTPTestServer) -> String {
        String(decoding: server.connections.first ?? [], as: UTF8.self)
    }

    /// Runs `body` and returns the failure it threw; fails the test when it threw nothing.
    private func failure(_ body: () throws(SMTPClient.Failure) -> Void, file: StaticString = #filePath, line: UInt = #line) -> SMTPClient.Failure? {
        do {
            try body()
            XCTFail("expected a failure", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Against SMTPSession

    func testSend_DeliversThroughASession_WithDotStuffingAndCRLF() throws {
        let handler = SMTPTestHandler()
        let server = try SMTPTestServer(.session(handler, SMTPLimits(), refuseEHLO: false))
        defer { server.stop() }
        let text = Array("Subject: dots\n\n.leading dot\n..two\r\n.\nlast line without newline".utf8)
        try Self.client(server).send(sender: "alice@client.test", recipients: ["bob@mx.test", "carol@mx.test"], data: text)

        XCTAssertEqual(handler.messages.count, 1)
        let message = try XCTUnwrap(handler.messages.first)
        XCTAssertEqual(message.heloName, "client.test")
        XCTAssertEqual(message.sender, "alice@client.test")
        XCTAssertEqual(message.recipients, ["bob@mx.test", "carol@mx.test"])
        XCTAssertEqual(String(decoding: message.data, as: UTF8.self),
                       "Subject: dots\r\n\r\n.leading dot\r\n..two\r\n.\r\nlast line without newline\r\n")
        XCTAssertFalse(message.eightBitMIME)
        XCTAssertEqual(Self.sent(server), "EHLO client.test\r\nMAIL FROM:<alice@client.test> SIZE=68\r\nRCPT TO:<bob@mx.test>\r\n"
            + "RCPT TO:<carol@mx.test>\r\nDATA\r\nSubject: dots\r\n\r\n..leading dot\r\n...two\r\n..\r\nlast line without newline\r\n.\r\nQUIT\r\n")
    }

    func testSend_NullSenderAnd8BitText_AreDeclared() throws {
        let handler = SMTPTestHandler()
        let server = try SMTPTestServer(.session(handler, SMTPLimits(), refuseEHLO: false))
        defer { server.stop() }
        try Self.client(server).send(sender: "", recipients: ["bob@mx.test"], data: Array("caf\u{E9}\r\n".utf8))
        XCTAssertEqual(handler.messages.map(\.sender), [""])
        XCTAssertEqual(handler.messages.map(\.eightBitMIME), [true])
        XCTAssertTrue(Self.sent(server).contains("MAIL FROM:<> SIZE=7 BODY=8BITMIME\r\n"))
    }

    func testSend_FailsNamingTheRefusedRecipient_AndDeliversNothing() throws {
        var rules = SMTPTestHandler.Rules()
        rules.recipients["x@y.test"] = SMTPReply(550, "5.1.1", "<x@y.test>: unauthorized sender")
        let handler = SMTPTestHandler(rules)
        let server = try SMTPTestServer(.session(handler, SMTPLimits(), refuseEHLO: false))
        defer { server.stop() }
        let client = Self.client(server)

        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try client.send(sender: "a@b.test", recipients: ["ok@y.test", "x@y.test"], data: Array("hi\r\n".utf8))
        }, .refused("RCPT TO:<x@y.test>: 550 5.1.1 <x@y.test>: unauthorized sender"))
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try client.send(sender: "a@b.test", recipients: ["x@y.test"], data: Array("hi\r\n".utf8))
        }, .refused("RCPT TO:<x@y.test>: 550 5.1.1 <x@y.test>: unauthorized sender"))
        XCTAssertTrue(handler.messages.isEmpty)
        XCTAssertTrue(Self.sent(server).hasSuffix("RCPT TO:<x@y.test>\r\nQUIT\r\n"))
        // The twin: the same send without the refused recipient is delivered.
        try client.send(sender: "a@b.test", recipients: ["ok@y.test"], data: Array("hi\r\n".utf8))
        XCTAssertEqual(handler.messages.map(\.recipients), [["ok@y.test"]])
    }

    func testSend_FailsWhenTheMessageIsRefused() throws {
        var rules = SMTPTestHandler.Rules()
        rules.delivery = SMTPReply(554, "5.7.1", "Rejected")
        let server = try SMTPTestServer(.session(SMTPTestHandler(rules), SMTPLimits(), refuseEHLO: false))
        defer { server.stop() }
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }, .refused("message: 554 5.7.1 Rejected"))
    }

    func testSend_RefusesEarly_WhenOverTheServersSize() throws {
        var limits = SMTPLimits()
        limits.maxMessageBytes = 10
        let handler = SMTPTestHandler()
        let server = try SMTPTestServer(.session(handler, limits, refuseEHLO: false))
        defer { server.stop() }
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: Array("0123456789".utf8))
        }, .refused("message of 12 bytes is over the server's SIZE 10"))
        try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: Array("01234567".utf8))
        XCTAssertEqual(handler.messages.count, 1)
    }

    func testSend_FallsBackToHELO_WhenEHLOIsRefused() throws {
        let handler = SMTPTestHandler()
        let server = try SMTPTestServer(.session(handler, SMTPLimits(), refuseEHLO: true))
        defer { server.stop() }
        try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: Array("\u{E9}\n".utf8))
        XCTAssertEqual(handler.messages.count, 1)
        // Without EHLO's list, no SIZE and no BODY parameter.
        XCTAssertTrue(Self.sent(server).hasPrefix("EHLO client.test\r\nHELO client.test\r\nMAIL FROM:<a@b.test>\r\n"))
    }

    // MARK: - Misbehaving servers

    func testSend_FailsOnAGreetingThatRefuses() throws {
        let server = try SMTPTestServer(.raw(Array("554 5.3.2 no service\r\n".utf8)))
        defer { server.stop() }
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }, .refused("greeting: 554 5.3.2 no service"))
    }

    func testSend_FailsOnBytesThatAreNotAReply() throws {
        for (bytes, expected) in [("hello\r\n", "reply line \"hello\""), ("220-a\r\n250 b\r\n", "reply lines with codes 220 and 250"),
                                  ("099 x\r\n", "reply code 99")] {
            let server = try SMTPTestServer(.raw(Array(bytes.utf8)))
            defer { server.stop() }
            XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
                try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
            }, .malformed(expected), bytes)
        }
        // A reply line without its line end is not a reply yet.
        let server = try SMTPTestServer(.raw(Array("220 ok".utf8)))
        defer { server.stop() }
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server, timeout: 0.3).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }, .timeout("waiting for the greeting"))
    }

    func testSend_FailsOnAReplyOverTheBound() throws {
        let line = "220-" + String(repeating: "x", count: 1000) + "\r\n"
        let server = try SMTPTestServer(.raw(Array(String(repeating: line, count: 80).utf8)))
        defer { server.stop() }
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }, .malformed("reply over 65536 bytes"))
    }

    func testSend_TimesOutOnASilentServer() throws {
        let server = try SMTPTestServer(.raw([]))
        defer { server.stop() }
        let started = Date()
        XCTAssertEqual(failure { () throws(SMTPClient.Failure) in
            try Self.client(server, timeout: 0.3).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }, .timeout("waiting for the greeting"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testSend_FailsToConnect_WhenNothingListens() throws {
        let server = try SMTPTestServer(.raw([]))
        let port = server.port
        server.stop()
        guard case .connect? = failure({ () throws(SMTPClient.Failure) in
            try SMTPClient(host: "127.0.0.1", port: port).send(sender: "a@b.test", recipients: ["c@d.test"], data: [])
        }) else { return XCTFail("expected a connect failure") }
    }

    func testSend_RefusesAddressesThatCouldInjectCommands() {
        let client = SMTPClient(host: "127.0.0.1", port: 1)
        let cases: [(String, [String], SMTPClient.Failure)] = [
            ("a@b.test>\r\nRCPT TO:<evil@x.test", ["c@d.test"], .invalidInput("sender \"a@b.test>\r\nRCPT TO:<evil@x.test\"")),
            ("a@b.test", ["c@d.test>"], .invalidInput("recipient \"c@d.test>\"")),
            ("a@b.test", [""], .invalidInput("recipient \"\"")),
            ("a b@b.test", ["c@d.test"], .invalidInput("sender \"a b@b.test\"")),
            ("a@b.test", [], .invalidInput("no recipients")),
        ]
        for (sender, recipients, expected) in cases {
            XCTAssertEqual(failure { () throws(SMTPClient.Failure) in try client.send(sender: sender, recipients: recipients, data: []) }, expected)
        }
        XCTAssertTrue(SMTPClient.isSendable("\"a b\"@b.test", allowingEmpty: false))
        XCTAssertFalse(SMTPClient.isSendable("\"a b@b.test", allowingEmpty: false))
        XCTAssertTrue(SMTPClient.isSendable("", allowingEmpty: true))
    }

    // MARK: - Pure parts

    func testEncode_StuffsDotsAndMakesLinesCRLF() {
        let cases: [(String, String, Int)] = [
            ("", ".\r\n", 0),
            ("a", "a\r\n.\r\n", 3),
            (".", "..\r\n.\r\n", 3),
            ("a\nb\r\n", "a\r\nb\r\n.\r\n", 6),
            ("x\n.\n..y\r\n", "x\r\n..\r\n...y\r\n.\r\n", 11),
            ("a.\n .\n", "a.\r\n .\r\n.\r\n", 8),
            ("a\rb\r", "a\rb\r\r\n.\r\n", 6),
        ]
        for (text, wire, size) in cases {
            let encoded = SMTPClient.encode(Array(text.utf8))
            XCTAssertEqual(String(decoding: encoded.wire, as: UTF8.self), wire, text)
            XCTAssertEqual(encoded.size, size, text)
        }
    }

    func testReplyReader_ReadsMultilineRepliesFedInAnyPieces() throws {
        let stream = Array("220 mx ready\r\n250-mx\r\n250-SIZE 10\n250 8BITMIME\r\n354\r\n".utf8)
        for piece in 1...stream.count {
            var reader = SMTPClient.ReplyReader(maxReplyBytes: 100)
            var replies: [SMTPReply] = []
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + piece)
                stream[offset..<end].withUnsafeBytes { reader.append($0) }
                offset = end
                while let reply = try reader.next() { replies.append(reply) }
            }
            XCTAssertEqual(replies, [SMTPReply(code: 220, lines: ["mx ready"]), SMTPReply(code: 250, lines: ["mx", "SIZE 10", "8BITMIME"]),
                                     SMTPReply(code: 354, lines: [""])], "pieces of \(piece)")
            XCTAssertEqual(reader.bufferedByteCount, 0)
        }
    }

    func testReplyReader_RefusesBrokenReplies_AndOnesOverTheBound() {
        for bad in ["25 x\r\n", "250x\r\n", "abc ok\r\n", "250-a\r\n251 b\r\n", "600 x\r\n", "\r\n"] {
            var reader = SMTPClient.ReplyReader(maxReplyBytes: 100)
            Array(bad.utf8).withUnsafeBytes { reader.append($0) }
            XCTAssertThrowsError(try reader.next(), bad)
        }
        var reader = SMTPClient.ReplyReader(maxReplyBytes: 10)
        Array("250 123456".utf8).withUnsafeBytes { reader.append($0) }
        XCTAssertNoThrow(try reader.next())
        Array("7".utf8).withUnsafeBytes { reader.append($0) }
        XCTAssertThrowsError(try reader.next())
        var fits = SMTPClient.ReplyReader(maxReplyBytes: 10)
        Array("250 1234\r\n".utf8).withUnsafeBytes { fits.append($0) }
        XCTAssertEqual(try fits.next(), SMTPReply(code: 250, lines: ["1234"]))
    }
}
