import MiniHTTP
import XCTest

/// `SMTPSession` fed bytes directly: exact replies, and the same replies however the input is cut.
final class SMTPSessionTests: XCTestCase {
    private static let host = "mx.test"
    private static let ehloReply = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n"
    private static let ehloReplyWithTLS = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250-ENHANCEDSTATUSCODES\r\n250 STARTTLS\r\n"

    /// What one run of a session said and did.
    private struct Run {
        /// Every reply, concatenated.
        var replies: String
        /// The first action other than `.none`, or `.none`.
        var action: SMTPSession.Action
        /// The most bytes the session held after any `receive`.
        var peakBuffered: Int
        var handler: SMTPTestHandler
        var session: SMTPSession
    }

    private static func session(limits: SMTPLimits = SMTPLimits(), tls: Bool = false, handler: SMTPTestHandler) -> SMTPSession {
        SMTPSession(hostname: host, limits: limits, tlsAvailable: tls, handler: handler)
    }

    /// Feeds `input` in pieces of `piece` bytes to a fresh session.
    private static func feed(_ input: [UInt8], piece: Int, limits: SMTPLimits, tls: Bool, rules: SMTPTestHandler.Rules) -> Run {
        let handler = SMTPTestHandler(rules)
        var session = session(limits: limits, tls: tls, handler: handler)
        var run = Run(replies: "", action: .none, peakBuffered: 0, handler: handler, session: session)
        var out: [UInt8] = []
        var offset = 0
        while offset < input.count {
            let end = min(input.count, offset + max(1, piece))
            let output = input[offset..<end].withUnsafeBytes { session.receive($0) }
            out += output.bytes
            if run.action == .none { run.action = output.action }
            run.peakBuffered = max(run.peakBuffered, session.bufferedBytes)
            offset = end
        }
        run.replies = String(decoding: out, as: UTF8.self)
        run.session = session
        return run
    }

    /// One line per delivered message, for comparing runs.
    private static func summary(_ messages: [SMTPMessage]) -> [String] {
        messages.map { "\($0.heloName)|\($0.sender)|\($0.recipients)|\($0.data)|\($0.eightBitMIME)|\($0.overTLS)" }
    }

    /// Feeds `input` at once, and checks that one byte at a time and seven at a time say and
    /// deliver exactly the same.
    private func converse(_ input: [UInt8], limits: SMTPLimits = SMTPLimits(), tls: Bool = false, rules: SMTPTestHandler.Rules = .init(),
                          file: StaticString = #filePath, line: UInt = #line) -> Run {
        let whole = Self.feed(input, piece: input.count, limits: limits, tls: tls, rules: rules)
        for piece in [1, 7] {
            let split = Self.feed(input, piece: piece, limits: limits, tls: tls, rules: rules)
            XCTAssertEqual(split.replies, whole.replies, "fed \(piece) bytes at a time", file: file, line: line)
            XCTAssertEqual(split.action, whole.action, "fed \(piece) bytes at a time", file: file, line: line)
            XCTAssertEqual(Self.summary(split.handler.messages), Self.summary(whole.handler.messages), "fed \(piece) bytes at a time", file: file, line: line)
            XCTAssertEqual(split.handler.asked, whole.handler.asked, "fed \(piece) bytes at a time", file: file, line: line)
        }
        return whole
    }

    private func converse(_ input: String, limits: SMTPLimits = SMTPLimits(), tls: Bool = false, rules: SMTPTestHandler.Rules = .init(),
                          file: StaticString = #filePath, line: UInt = #line) -> Run {
        converse(Array(input.utf8), limits: limits, tls: tls, rules: rules, file: file, line: line)
    }

    private static func receive(_ session: inout SMTPSession, _ text: String) -> (replies: String, action: SMTPSession.Action) {
        let output = Array(text.utf8).withUnsafeBytes { session.receive($0) }
        return (String(decoding: output.bytes, as: UTF8.self), output.action)
    }

    private static let envelope = "EHLO client.test\r\nMAIL FROM:<alice@client.test>\r\nRCPT TO:<bob@mx.test>\r\n"
    private static let envelopeReplies = ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n"

    // MARK: - Greeting, EHLO, HELO

    func testGreeting_NamesTheHostAndESMTP() {
        let session = Self.session(handler: SMTPTestHandler())
        XCTAssertEqual(String(decoding: session.greeting, as: UTF8.self), "220 mx.test ESMTP AppleIDMock\r\n")
        XCTAssertEqual(String(decoding: session.timeoutReply(), as: UTF8.self), "421 4.4.2 mx.test Error: timeout exceeded\r\n")
        XCTAssertFalse(session.isClosed)
        XCTAssertEqual(session.bufferedBytes, 0)
    }

    func testEHLO_ListsExtensions_AndStartTLSOnlyWhenAvailable() {
        XCTAssertEqual(converse("EHLO client.test\r\n", tls: true).replies, Self.ehloReplyWithTLS)
        XCTAssertEqual(converse("EHLO client.test\r\n", tls: false).replies, Self.ehloReply)
        var limits = SMTPLimits()
        limits.maxMessageBytes = 2048
        XCTAssertEqual(converse("ehlo client.test\r\n", limits: limits).replies,
                       "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 2048\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n")
    }

    func testHELO_AnswersOneLine() {
        XCTAssertEqual(converse("HELO client.test\r\n").replies, "250 mx.test\r\n")
        XCTAssertEqual(converse("HELO\r\n").replies, "501 5.5.4 Syntax: HELO hostname\r\n")
    }

    func testEHLO_AcceptsDomainsAndAddressLiterals_AndRefusesOtherArguments() {
        for accepted in ["client.test", "localhost", "my_pc", "a-b.example", "[127.0.0.1]", "[IPv6:::1]", "[IPv6:2001:db8::1]", "[x-tag:anything]"] {
            XCTAssertEqual(converse("EHLO \(accepted)\r\n").replies, Self.ehloReply, accepted)
        }
        for refused in ["", "bad..name", "-lead.test", "trail-.test", "two words", "[127.0.0.256]", "[IPv6:zz::1]", "[]", "a@b", ".", "x.test."] {
            XCTAssertEqual(converse("EHLO \(refused)\r\n").replies, "501 5.5.4 Syntax: EHLO hostname\r\n", refused)
        }
        XCTAssertEqual(converse("EHLO\r\n").replies, "501 5.5.4 Syntax: EHLO hostname\r\n")
        XCTAssertEqual(converse("EHLO \(String(repeating: "a", count: 64)).test\r\n").replies, "501 5.5.4 Syntax: EHLO hostname\r\n")
        XCTAssertEqual(converse("EHLO \(String(repeating: "a", count: 63)).test\r\n").replies, Self.ehloReply)
    }

    func testEHLO_TrailingSpacesAndExtraSpacesAreTolerated() {
        XCTAssertEqual(converse("EHLO  client.test  \r\n").replies, Self.ehloReply)
        XCTAssertEqual(converse("EHLO\tclient.test\r\n").replies, "500 5.5.2 Error: bad syntax\r\n")
    }

    // MARK: - A whole conversation

    func testConversation_DeliversTheMessage_WithExactReplies() {
        let input = Self.envelope + "RCPT TO:<carol@mx.test>\r\nDATA\r\nSubject: hi\r\n\r\nHello.\r\n.\r\nQUIT\r\n"
        let run = converse(input)
        XCTAssertEqual(run.replies, Self.envelopeReplies + "250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n221 2.0.0 Bye\r\n")
        XCTAssertEqual(run.action, .close)
        XCTAssertTrue(run.session.isClosed)
        XCTAssertEqual(run.handler.asked, ["sender alice@client.test helo client.test", "recipient bob@mx.test from alice@client.test",
                                           "recipient carol@mx.test from alice@client.test"])
        let message = run.handler.messages.first
        XCTAssertEqual(run.handler.messages.count, 1)
        XCTAssertEqual(message?.heloName, "client.test")
        XCTAssertEqual(message?.sender, "alice@client.test")
        XCTAssertEqual(message?.recipients, ["bob@mx.test", "carol@mx.test"])
        XCTAssertEqual(message.map { String(decoding: $0.data, as: UTF8.self) }, "Subject: hi\r\n\r\nHello.\r\n")
        XCTAssertEqual(message?.eightBitMIME, false)
        XCTAssertEqual(message?.overTLS, false)
        XCTAssertEqual(run.session.bufferedBytes, 0)
    }

    func testConversation_SameRepliesAndMessages_WhenFedInAnyPieces() {
        let input = Array((Self.envelope + "DATA\r\nline one\r\n..dot\r\n\r\n.\r\nMAIL FROM:<>\r\nRCPT TO:<x@y.test>\r\nDATA\r\n.\r\nNOOP\r\n").utf8)
        let whole = Self.feed(input, piece: input.count, limits: SMTPLimits(), tls: false, rules: .init())
        XCTAssertEqual(whole.handler.messages.count, 2)
        for piece in 1...input.count {
            let split = Self.feed(input, piece: piece, limits: SMTPLimits(), tls: false, rules: .init())
            XCTAssertEqual(split.replies, whole.replies, "pieces of \(piece)")
            XCTAssertEqual(Self.summary(split.handler.messages), Self.summary(whole.handler.messages), "pieces of \(piece)")
        }
        // A twin that differs in one byte must not compare equal: the comparison can fail.
        var twin = input
        twin[twin.count - 3] = UInt8(ascii: "X")
        XCTAssertNotEqual(Self.feed(twin, piece: 1, limits: SMTPLimits(), tls: false, rules: .init()).replies, whole.replies)
    }

    func testPipelining_AnswersEveryCommandInOrder_AndTakesTextAfterDATA() {
        let input = Self.envelope + "RCPT TO:<bad>\r\nNOOP\r\nDATA\r\nbody\r\n.\r\nRSET\r\nQUIT\r\nNOOP\r\n"
        let run = converse(input)
        XCTAssertEqual(run.replies, Self.envelopeReplies + "501 5.1.3 Bad recipient address syntax\r\n250 2.0.0 Ok\r\n"
            + "354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n250 2.0.0 Ok\r\n221 2.0.0 Bye\r\n")
        XCTAssertEqual(run.handler.messages.map { String(decoding: $0.data, as: UTF8.self) }, ["body\r\n"])
    }

    func testReceive_AfterClose_IgnoresInputAndAsksToClose() {
        var run = converse("QUIT\r\n")
        XCTAssertEqual(run.replies, "221 2.0.0 Bye\r\n")
        let after = Self.receive(&run.session, "NOOP\r\n")
        XCTAssertEqual(after.replies, "")
        XCTAssertEqual(after.action, .close)
        XCTAssertEqual(converse("QUIT now\r\nNOOP\r\n").replies, "501 5.5.4 Syntax: QUIT\r\n250 2.0.0 Ok\r\n")
    }

    // MARK: - MAIL FROM

    func testMail_NeedsEHLOFirst_AndRefusesANestedMAIL() {
        XCTAssertEqual(converse("MAIL FROM:<a@b.test>\r\n").replies, "503 5.5.1 Error: send HELO/EHLO first\r\n")
        XCTAssertEqual(converse("HELO c.test\r\nMAIL FROM:<a@b.test>\r\n").replies, "250 mx.test\r\n250 2.1.0 Ok\r\n")
        XCTAssertEqual(converse("HELO c.test\r\nMAIL FROM:<a@b.test>\r\nMAIL FROM:<a@b.test>\r\n").replies,
                       "250 mx.test\r\n250 2.1.0 Ok\r\n503 5.5.1 Error: nested MAIL command\r\n")
        XCTAssertEqual(converse("HELO c.test\r\nMAIL FROM:<a@b.test>\r\nRSET\r\nMAIL FROM:<a@b.test>\r\n").replies,
                       "250 mx.test\r\n250 2.1.0 Ok\r\n250 2.0.0 Ok\r\n250 2.1.0 Ok\r\n")
    }

    /// The MAIL FROM reply for `argument`, after HELO.
    private func mailReply(_ argument: String, limits: SMTPLimits = SMTPLimits(), file: StaticString = #filePath, line: UInt = #line) -> String {
        let run = converse("HELO c.test\r\nMAIL \(argument)\r\n", limits: limits, file: file, line: line)
        return String(run.replies.dropFirst("250 mx.test\r\n".count))
    }

    func testMail_AcceptsPaths_AndRefusesTheirBrokenTwins() {
        let cases: [(accepted: String, refused: String, reply: String)] = [
            ("FROM:<a@b.test>", "FROM:a@b.test", "501 5.5.4 Syntax: MAIL FROM:<address>\r\n"),
            ("from:<a@b.test>", "FROM<a@b.test>", "501 5.5.4 Syntax: MAIL FROM:<address>\r\n"),
            ("FROM: <a@b.test>", "FROM:<a@b.test", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<>", "FROM:<@>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<first.last@b.test>", "FROM:<first..last@b.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<\"a b>c\"@b.test>", "FROM:<\"a b@b.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@[192.0.2.1]>", "FROM:<a@[192.0.2]>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<@relay.test,@hop.test:a@b.test>", "FROM:<@relay.test,hop.test:a@b.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "FROM:<a@b.test>x", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "FROM:<a@-b.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "FROM:<a@b_c.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "FROM:<ä@b.test>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "FROM:<a>", "501 5.1.7 Bad sender address syntax\r\n"),
            ("FROM:<a@b.test>", "TO:<a@b.test>", "501 5.5.4 Syntax: MAIL FROM:<address>\r\n"),
        ]
        for (accepted, refused, reply) in cases {
            XCTAssertEqual(mailReply(accepted), "250 2.1.0 Ok\r\n", accepted)
            XCTAssertEqual(mailReply(refused), reply, refused)
        }
    }

    func testMail_GivesTheHandlerTheAddress_WithoutBracketsOrSourceRoute() {
        let run = converse("HELO c.test\r\nMAIL FROM:<@relay.test:\"x y\"@b.test>\r\nRSET\r\nMAIL FROM:<>\r\n")
        XCTAssertEqual(run.handler.asked, ["sender \"x y\"@b.test helo c.test", "sender  helo c.test"])
    }

    func testMail_RefusesAPathOver256Bytes() {
        // `<` + 64 + `@` + domain + `>`: a domain of 189 makes 256 bytes.
        let label = String(repeating: "d", count: 63)
        let domain189 = "\(label).\(label).\(String(repeating: "d", count: 61))"
        let local = String(repeating: "l", count: 64)
        XCTAssertEqual("<\(local)@\(domain189)>".utf8.count, 256)
        XCTAssertEqual(mailReply("FROM:<\(local)@\(domain189)>"), "250 2.1.0 Ok\r\n")
        XCTAssertEqual(mailReply("FROM:<\(local)x@\(domain189)>"), "501 5.1.7 Error: path too long\r\n")
    }

    func testMail_SizeParameter_RefusesOverTheLimit() {
        var limits = SMTPLimits()
        limits.maxMessageBytes = 1000
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE=1000", limits: limits), "250 2.1.0 Ok\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE=1001", limits: limits), "552 5.3.4 Message size exceeds fixed limit\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> size=99999999999999999999", limits: limits), "552 5.3.4 Message size exceeds fixed limit\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE=12x", limits: limits), "501 5.5.4 Bad message size syntax\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE=", limits: limits), "501 5.5.4 Bad message size syntax\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE=123456789012345678901", limits: limits), "501 5.5.4 Bad message size syntax\r\n")
        // Refused by size: no transaction began.
        XCTAssertEqual(converse("HELO c.test\r\nMAIL FROM:<a@b.test> SIZE=1001\r\nRCPT TO:<x@y.test>\r\n", limits: limits).replies,
                       "250 mx.test\r\n552 5.3.4 Message size exceeds fixed limit\r\n503 5.5.1 Error: need MAIL command\r\n")
    }

    func testMail_BodyParameter_And_UnknownParameters() {
        XCTAssertEqual(mailReply("FROM:<a@b.test> BODY=8BITMIME SIZE=10"), "250 2.1.0 Ok\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> body=7bit"), "250 2.1.0 Ok\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> BODY=BINARYMIME"), "501 5.5.4 Bad BODY keyword syntax\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> AUTH=<>"), "555 5.5.4 Unsupported option: AUTH=<>\r\n")
        XCTAssertEqual(mailReply("FROM:<a@b.test> SIZE"), "555 5.5.4 Unsupported option: SIZE\r\n")
        let eight = converse(Self.envelope.replacingOccurrences(of: "<alice@client.test>", with: "<alice@client.test> BODY=8BITMIME")
            + "DATA\r\n\u{E9}t\u{E9}\r\n.\r\n")
        let seven = converse(Self.envelope + "DATA\r\nplain\r\n.\r\n")
        XCTAssertEqual(eight.handler.messages.map(\.eightBitMIME), [true])
        XCTAssertEqual(eight.handler.messages.map(\.data), [Array("\u{E9}t\u{E9}\r\n".utf8)])
        XCTAssertEqual(seven.handler.messages.map(\.eightBitMIME), [false])
    }

    // MARK: - RCPT TO

    func testRcpt_NeedsMAIL_AndRefusesTheNullPath() {
        XCTAssertEqual(converse("HELO c.test\r\nRCPT TO:<x@y.test>\r\n").replies, "250 mx.test\r\n503 5.5.1 Error: need MAIL command\r\n")
        let prefix = "HELO c.test\r\nMAIL FROM:<>\r\n"
        let ok = "250 mx.test\r\n250 2.1.0 Ok\r\n"
        XCTAssertEqual(converse(prefix + "RCPT TO:<x@y.test>\r\n").replies, ok + "250 2.1.5 Ok\r\n")
        XCTAssertEqual(converse(prefix + "RCPT TO:<>\r\n").replies, ok + "501 5.1.3 Bad recipient address syntax\r\n")
        XCTAssertEqual(converse(prefix + "rcpt to: <Postmaster>\r\n").replies, ok + "250 2.1.5 Ok\r\n")
        XCTAssertEqual(converse(prefix + "RCPT TO:<postmasters>\r\n").replies, ok + "501 5.1.3 Bad recipient address syntax\r\n")
        XCTAssertEqual(converse(prefix + "RCPT TO x@y.test\r\n").replies, ok + "501 5.5.4 Syntax: RCPT TO:<address>\r\n")
        XCTAssertEqual(converse(prefix + "RCPT TO:<x@y.test> NOTIFY=NEVER\r\n").replies, ok + "555 5.5.4 Unsupported option: NOTIFY=NEVER\r\n")
        XCTAssertEqual(converse(prefix + "RCPT TO:<@hop.test:x@y.test>\r\n").handler.asked.last, "recipient x@y.test from ")
        XCTAssertEqual(converse(prefix + "rcpt to: <Postmaster>\r\n").handler.asked.last, "recipient Postmaster from ")
    }

    func testRcpt_RefusesRecipientsOverTheLimit_AndDeliversToTheAcceptedOnes() {
        var limits = SMTPLimits()
        limits.maxRecipients = 2
        let run = converse("EHLO c.test\r\nMAIL FROM:<a@b.test>\r\nRCPT TO:<one@x.test>\r\nRCPT TO:<two@x.test>\r\nRCPT TO:<three@x.test>\r\nDATA\r\nx\r\n.\r\n",
                           limits: limits)
        XCTAssertEqual(run.replies, Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n250 2.1.5 Ok\r\n452 4.5.3 Error: too many recipients\r\n"
            + "354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n")
        XCTAssertEqual(run.handler.messages.map(\.recipients), [["one@x.test", "two@x.test"]])
        XCTAssertFalse(run.handler.asked.contains("recipient three@x.test from a@b.test"))
    }

    func testHandler_RecipientRefusal_PassesThroughVerbatim() {
        var rules = SMTPTestHandler.Rules()
        rules.recipients["x@y.test"] = SMTPReply(550, "5.1.1", "<x@y.test>: unauthorized sender")
        let prefix = "EHLO c.test\r\nMAIL FROM:<a@b.test>\r\n"
        let refused = converse(prefix + "RCPT TO:<x@y.test>\r\nDATA\r\n", rules: rules)
        XCTAssertEqual(refused.replies, Self.ehloReply + "250 2.1.0 Ok\r\n550 5.1.1 <x@y.test>: unauthorized sender\r\n554 5.5.1 Error: no valid recipients\r\n")
        let accepted = converse(prefix + "RCPT TO:<z@y.test>\r\nDATA\r\n", rules: rules)
        XCTAssertEqual(accepted.replies, Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n")
    }

    func testHandler_SenderRefusal_BeginsNoTransaction() {
        var rules = SMTPTestHandler.Rules()
        rules.senders["spam@b.test"] = SMTPReply(code: 550, lines: ["5.7.1 first line", "5.7.1 go away"])
        let run = converse("EHLO c.test\r\nMAIL FROM:<spam@b.test>\r\nRCPT TO:<x@y.test>\r\nMAIL FROM:<ok@b.test>\r\n", rules: rules)
        XCTAssertEqual(run.replies, Self.ehloReply + "550-5.7.1 first line\r\n550 5.7.1 go away\r\n503 5.5.1 Error: need MAIL command\r\n250 2.1.0 Ok\r\n")
    }

    func testHandler_DeliveryReply_PassesThrough_AndA421Closes() {
        var rules = SMTPTestHandler.Rules()
        rules.delivery = SMTPReply(451, "4.3.0", "Try later")
        XCTAssertEqual(converse(Self.envelope + "DATA\r\nx\r\n.\r\nNOOP\r\n", rules: rules).replies,
                       Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n451 4.3.0 Try later\r\n250 2.0.0 Ok\r\n")
        rules.delivery = SMTPReply(421, "4.3.2", "Shutting down")
        let closing = converse(Self.envelope + "DATA\r\nx\r\n.\r\nNOOP\r\n", rules: rules)
        XCTAssertEqual(closing.replies, Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n421 4.3.2 Shutting down\r\n")
        XCTAssertEqual(closing.action, .close)
    }

    // MARK: - DATA

    func testData_NeedsAnAcceptedRecipient() {
        XCTAssertEqual(converse("EHLO c.test\r\nDATA\r\n").replies, Self.ehloReply + "503 5.5.1 Error: need RCPT command\r\n")
        XCTAssertEqual(converse("EHLO c.test\r\nMAIL FROM:<>\r\nDATA\r\n").replies, Self.ehloReply + "250 2.1.0 Ok\r\n503 5.5.1 Error: need RCPT command\r\n")
        XCTAssertEqual(converse(Self.envelope + "DATA now\r\n").replies, Self.envelopeReplies + "501 5.5.4 Syntax: DATA\r\n")
        XCTAssertEqual(converse(Self.envelope + "DATA\r\n").replies, Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n")
    }

    /// The data of the one message `text` (what follows DATA) delivers, or nil.
    private func delivered(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let run = converse(Self.envelope + "DATA\r\n" + text, file: file, line: line)
        XCTAssertLessThanOrEqual(run.handler.messages.count, 1, file: file, line: line)
        return run.handler.messages.first.map { String(decoding: $0.data, as: UTF8.self) }
    }

    func testData_RemovesOneLeadingDot_AndEndsOnlyAtALoneDot() {
        XCTAssertEqual(delivered("..\r\n.\r\n"), ".\r\n")
        XCTAssertEqual(delivered("..leading\r\n...two\r\n.\r\n"), ".leading\r\n..two\r\n")
        XCTAssertEqual(delivered(".x\r\n.\r\n"), "x\r\n")
        XCTAssertEqual(delivered("a.\r\n .\r\n. \r\n.\r\n"), "a.\r\n .\r\n \r\n")
        XCTAssertEqual(delivered(".\r\n"), "")
        // Not ended yet: a dot that is not alone on its line.
        XCTAssertNil(delivered(". \r\n"))
        XCTAssertNil(delivered("..\r\n"))
        XCTAssertNil(delivered("x\r\n.x\r\n"))
        XCTAssertNil(delivered("x\r\n."))
    }


    func testData_RefusesAMessageOverTheSizeLimit_AndResetsTheTransaction() {
        var limits = SMTPLimits()
        limits.maxMessageBytes = 100
        let fits = String(repeating: "x", count: 98) + "\r\n"
        let over = String(repeating: "x", count: 99) + "\r\n"
        let after = "RCPT TO:<z@y.test>\r\nMAIL FROM:<a@b.test>\r\n"
        let accepted = converse(Self.envelope + "DATA\r\n" + fits + ".\r\n" + after, limits: limits)
        XCTAssertEqual(accepted.handler.messages.map(\.data.count), [100])
        let refused = converse(Self.envelope + "DATA\r\n" + over + ".\r\n" + after, limits: limits)
        let envelopeReplies = Self.envelopeReplies.replacingOccurrences(of: "SIZE 10485760", with: "SIZE 100")
        XCTAssertEqual(refused.replies, envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n552 5.3.4 Error: message file too big\r\n"
            + "503 5.5.1 Error: need MAIL command\r\n250 2.1.0 Ok\r\n")
        XCTAssertTrue(refused.handler.messages.isEmpty)
    }

    func testData_StaysBounded_WhileAMessageFarOverTheLimitArrives() {
        var limits = SMTPLimits()
        limits.maxMessageBytes = 1000
        var session = Self.session(limits: limits, handler: SMTPTestHandler())
        _ = Self.receive(&session, Self.envelope + "DATA\r\n")
        let line = String(repeating: "y", count: 500) + "\r\n"
        for _ in 0..<200 {
            XCTAssertEqual(Self.receive(&session, line).replies, "")
            XCTAssertLessThanOrEqual(session.bufferedBytes, limits.maxMessageBytes)
        }
        XCTAssertEqual(Self.receive(&session, ".\r\n").replies, "552 5.3.4 Error: message file too big\r\n")
        XCTAssertEqual(session.bufferedBytes, 0)
    }

    func testData_RefusesALineOverTheTextLineLimit_AtTheDot() {
        var limits = SMTPLimits()
        limits.maxTextLineBytes = 20
        let ok = converse(Self.envelope + "DATA\r\n" + String(repeating: "a", count: 18) + "\r\n.\r\n", limits: limits)
        XCTAssertEqual(ok.handler.messages.count, 1)
        XCTAssertTrue(ok.replies.hasSuffix("250 2.0.0 Ok: queued\r\n"))
        // The stuffed dot counts: it was sent.
        let stuffed = converse(Self.envelope + "DATA\r\n." + String(repeating: "a", count: 18) + "\r\n.\r\nNOOP\r\n", limits: limits)
        XCTAssertTrue(stuffed.handler.messages.isEmpty)
        XCTAssertTrue(stuffed.replies.hasSuffix("354 End data with <CR><LF>.<CR><LF>\r\n500 5.5.2 Error: message line too long\r\n250 2.0.0 Ok\r\n"))
    }

    func testData_RefusesAMessageWithNUL_AtTheDot() {
        let refused = converse(Self.envelope + "DATA\r\nab\u{0}c\r\n.\r\n")
        XCTAssertEqual(refused.replies, Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n554 5.6.0 Error: message contains NUL characters\r\n")
        XCTAssertTrue(refused.handler.messages.isEmpty)
        let twin = converse(Self.envelope + "DATA\r\nab0c\r\n.\r\n")
        XCTAssertEqual(twin.handler.messages.count, 1)
    }

    // MARK: - Bare LF, bare CR, NUL, long lines

    func testBareLF_InACommand_Answers521AndCloses() {
        let run = converse("EHLO c.test\nNOOP\r\n")
        XCTAssertEqual(run.replies, "521 5.5.2 mx.test Error: bare <LF> received\r\n")
        XCTAssertEqual(run.action, .close)
        XCTAssertEqual(converse("EHLO c.test\r\nNOOP\r\n").action, .none)
    }

    func testBareLF_InData_Answers521AndClosesWithoutDelivering() {
        let run = converse(Self.envelope + "DATA\r\nline\n.\r\n")
        XCTAssertEqual(run.replies, Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n521 5.5.2 mx.test Error: bare <LF> received\r\n")
        XCTAssertEqual(run.action, .close)
        XCTAssertTrue(run.handler.messages.isEmpty)
        // The smuggling shape: `\n.\r\n` must not end the data, nor be taken as text.
        let smuggle = converse(Self.envelope + "DATA\r\nx\r\n\n.\r\nMAIL FROM:<evil@b.test>\r\n")
        XCTAssertEqual(smuggle.action, .close)
        XCTAssertTrue(smuggle.handler.messages.isEmpty)
        XCTAssertFalse(smuggle.handler.asked.contains("sender evil@b.test helo client.test"))
    }

    func testBareCR_InData_Answers521AndClosesWithoutDelivering() {
        let run = converse(Self.envelope + "DATA\r\na\rb\r\n.\r\n")
        XCTAssertEqual(run.replies, Self.envelopeReplies + "354 End data with <CR><LF>.<CR><LF>\r\n521 5.5.2 mx.test Error: bare <CR> received\r\n")
        XCTAssertEqual(run.action, .close)
        XCTAssertTrue(run.handler.messages.isEmpty)
        // The smuggling shape (probe P9): `\r.\r` must neither end the data nor reach the handler.
        let smuggle = converse(Self.envelope + "DATA\r\nhello\r.\rMAIL FROM:<spoof@b.test>\rRCPT TO:<z@y.test>\rDATA\r\r.\r\r\n.\r\n")
        XCTAssertEqual(smuggle.action, .close)
        XCTAssertTrue(smuggle.handler.messages.isEmpty)
        XCTAssertFalse(smuggle.handler.asked.contains("sender spoof@b.test helo client.test"))
        // A CR at the end of a line of text, before its CRLF, is bare too; at a read's edge it waits for the next byte.
        XCTAssertEqual(converse(Self.envelope + "DATA\r\nx\r\r\n.\r\n").action, .close)
        XCTAssertEqual(delivered("a\r"), nil)
    }

    func testData_WithEveryLineEndedByCRLF_IsDelivered() {
        // The accepted twin of the bare-CR refusal: the same bytes with every CR followed by its LF.
        XCTAssertEqual(delivered("a\r\nb\r\n\r\n.\r\n"), "a\r\nb\r\n\r\n")
        XCTAssertEqual(delivered("hello\r\n..\r\nMAIL FROM:<spoof@b.test>\r\n.\r\n"), "hello\r\n.\r\nMAIL FROM:<spoof@b.test>\r\n")
    }

    func testCommand_WithNULOrBareCR_IsASyntaxError() {
        XCTAssertEqual(converse("NO\u{0}OP\r\nNOOP\r\n").replies, "500 5.5.2 Error: bad syntax\r\n250 2.0.0 Ok\r\n")
        XCTAssertEqual(converse("NOOP\rx\r\n").replies, "500 5.5.2 Error: bad syntax\r\n")
        XCTAssertEqual(converse("\r\n").replies, "500 5.5.2 Error: bad syntax\r\n")
        XCTAssertEqual(converse("NOOP x\r\n").replies, "250 2.0.0 Ok\r\n")
    }

    func testCommand_OverTheLineLimit_Answers500_AndTheNextLineIsRead() {
        // 512 bytes with CRLF fit; 513 do not.
        let fits = "NOOP " + String(repeating: "a", count: 505) + "\r\n"
        let over = "NOOP " + String(repeating: "a", count: 506) + "\r\n"
        XCTAssertEqual(fits.utf8.count, 512)
        XCTAssertEqual(converse(fits + "NOOP\r\n").replies, "250 2.0.0 Ok\r\n250 2.0.0 Ok\r\n")
        let run = converse(over + "NOOP\r\n")
        XCTAssertEqual(run.replies, "500 5.5.2 Error: line too long\r\n250 2.0.0 Ok\r\n")
        XCTAssertLessThanOrEqual(run.peakBuffered, 512)
        // A bare LF inside the discarded part still closes.
        XCTAssertEqual(converse(over.dropLast(2) + "x\nNOOP\r\n").action, .close)
    }

    func testCommand_LongLinesStayBounded() {
        var session = Self.session(handler: SMTPTestHandler())
        for _ in 0..<100 {
            XCTAssertEqual(Self.receive(&session, String(repeating: "z", count: 1000)).replies, "")
            XCTAssertLessThanOrEqual(session.bufferedBytes, 512)
        }
        XCTAssertEqual(Self.receive(&session, "\r\n").replies, "500 5.5.2 Error: line too long\r\n")
        XCTAssertEqual(session.bufferedBytes, 0)
    }

    // MARK: - Errors

    func testTooManyErrors_Answers421AndCloses() {
        var limits = SMTPLimits()
        limits.maxErrors = 3
        let run = converse("FOO\r\nBAR\r\nNOOP\r\nAUTH PLAIN\r\nNOOP\r\n", limits: limits)
        XCTAssertEqual(run.replies, "502 5.5.2 Error: command not recognized\r\n502 5.5.2 Error: command not recognized\r\n250 2.0.0 Ok\r\n"
            + "502 5.5.1 Error: authentication not enabled\r\n421 4.7.0 mx.test Error: too many errors\r\n")
        XCTAssertEqual(run.action, .close)
        XCTAssertTrue(run.session.isClosed)
        let twin = converse("FOO\r\nBAR\r\nNOOP\r\nNOOP\r\n", limits: limits)
        XCTAssertEqual(twin.action, .none)
        XCTAssertFalse(twin.session.isClosed)
    }

    func testOtherCommands_ExactReplies() {
        XCTAssertEqual(converse("VRFY bob\r\n").replies, "252 2.0.0 Cannot VRFY user, but will accept message and attempt delivery\r\n")
        XCTAssertEqual(converse("VRFY\r\n").replies, "501 5.5.4 Syntax: VRFY address\r\n")
        XCTAssertEqual(converse("HELP\r\n").replies, "214 2.0.0 Commands: EHLO HELO MAIL RCPT DATA RSET NOOP QUIT VRFY HELP STARTTLS\r\n")
        XCTAssertEqual(converse("BDAT 10 LAST\r\n").replies, "502 5.5.2 Error: command not recognized\r\n")
        XCTAssertEqual(converse("EXPN list\r\n").replies, "502 5.5.2 Error: command not recognized\r\n")
        XCTAssertEqual(converse("RSET x\r\n").replies, "501 5.5.4 Syntax: RSET\r\n")
        XCTAssertEqual(converse("rset\r\nnoop\r\n").replies, "250 2.0.0 Ok\r\n250 2.0.0 Ok\r\n")
    }

    func testSecondEHLO_ResetsTheTransaction() {
        let run = converse("EHLO c.test\r\nMAIL FROM:<a@b.test>\r\nEHLO d.test\r\nRCPT TO:<x@y.test>\r\nMAIL FROM:<a@b.test>\r\n")
        XCTAssertEqual(run.replies, Self.ehloReply + "250 2.1.0 Ok\r\n" + Self.ehloReply + "503 5.5.1 Error: need MAIL command\r\n250 2.1.0 Ok\r\n")
        XCTAssertEqual(run.handler.asked, ["sender a@b.test helo c.test", "sender a@b.test helo d.test"])
    }

    // MARK: - STARTTLS

    func testStartTLS_DiscardsInputPipelinedAfterIt() {
        let handler = SMTPTestHandler()
        var session = Self.session(tls: true, handler: handler)
        let first = Self.receive(&session, "EHLO c.test\r\nSTARTTLS\r\nMAIL FROM:<evil@b.test>\r\n")
        XCTAssertEqual(first.replies, Self.ehloReplyWithTLS + "220 2.0.0 Ready to start TLS\r\n")
        XCTAssertEqual(first.action, .startTLS)
        XCTAssertEqual(session.bufferedBytes, 0)
        // Plaintext before the handshake is done is discarded too.
        XCTAssertEqual(Self.receive(&session, "RCPT TO:<x@y.test>\r\n").replies, "")
        session.tlsStarted()
        // EHLO is forgotten, and the injected MAIL never ran.
        XCTAssertEqual(Self.receive(&session, "MAIL FROM:<a@b.test>\r\n").replies, "503 5.5.1 Error: send HELO/EHLO first\r\n")
        XCTAssertEqual(handler.asked, [])
        // STARTTLS is no longer offered, and the message says it came over TLS.
        let second = Self.receive(&session, "EHLO c.test\r\nMAIL FROM:<a@b.test>\r\nRCPT TO:<x@y.test>\r\nDATA\r\nhi\r\n.\r\nSTARTTLS\r\n")
        XCTAssertEqual(second.replies, Self.ehloReply + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n"
            + "503 5.5.1 Error: TLS already active\r\n")
        XCTAssertEqual(second.action, .none)
        XCTAssertEqual(handler.messages.map(\.overTLS), [true])
    }

    func testStartTLS_ForgetsATransaction() {
        let handler = SMTPTestHandler()
        var session = Self.session(tls: true, handler: handler)
        _ = Self.receive(&session, "EHLO c.test\r\n")
        XCTAssertEqual(Self.receive(&session, "STARTTLS\r\n").action, .startTLS)
        session.tlsStarted()
        XCTAssertEqual(Self.receive(&session, "EHLO c.test\r\nMAIL FROM:<a@b.test>\r\n").replies, Self.ehloReply + "250 2.1.0 Ok\r\n")
    }

    func testStartTLS_RefusedWhenUnavailable_WithArguments_OrInATransaction() {
        XCTAssertEqual(converse("STARTTLS\r\nNOOP\r\n", tls: false).replies, "454 4.7.0 TLS not available\r\n250 2.0.0 Ok\r\n")
        XCTAssertEqual(converse("STARTTLS now\r\n", tls: true).replies, "501 5.5.4 Syntax: STARTTLS\r\n")
        XCTAssertEqual(converse("EHLO c.test\r\nMAIL FROM:<>\r\nSTARTTLS\r\n", tls: true).replies,
                       Self.ehloReplyWithTLS + "250 2.1.0 Ok\r\n503 5.5.1 Error: MAIL transaction in progress\r\n")
        let accepted = converse("starttls\r\nNOOP\r\n", tls: true)
        XCTAssertEqual(accepted.replies, "220 2.0.0 Ready to start TLS\r\n")
        XCTAssertEqual(accepted.action, .startTLS)
    }

    // MARK: - SMTPReply

    func testReply_WireForm() {
        XCTAssertEqual(SMTPReply(550, "5.1.1", "<x@y>: unauthorized sender").bytes, Array("550 5.1.1 <x@y>: unauthorized sender\r\n".utf8))
        XCTAssertEqual(SMTPReply(354, nil, "Go").bytes, Array("354 Go\r\n".utf8))
        XCTAssertEqual(SMTPReply(code: 250, lines: ["a", "b", "c"]).bytes, Array("250-a\r\n250-b\r\n250 c\r\n".utf8))
        XCTAssertEqual(SMTPReply(code: 250, lines: []).bytes, Array("250 \r\n".utf8))
        // No text can end a reply early or forge another; the code is always three digits a client acts on.
        XCTAssertEqual(SMTPReply(550, nil, "a\r\n250 ok").bytes, Array("550 a  250 ok\r\n".utf8))
        XCTAssertEqual(SMTPReply(42, nil, "x").bytes, Array("451 x\r\n".utf8))
        XCTAssertEqual(SMTPReply(1000, nil, "x").bytes, Array("451 x\r\n".utf8))
        XCTAssertFalse(SMTPReply(42, nil, "x").isPositive)
        XCTAssertTrue(SMTPReply(251, nil, "x").isPositive)
        XCTAssertEqual(SMTPReply(code: 550, lines: ["5.7.1 a", "5.7.1 b"]).text, "550 5.7.1 a 5.7.1 b")
    }
}
