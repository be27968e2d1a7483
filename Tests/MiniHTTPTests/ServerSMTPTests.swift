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
    let clock = ManualServerClock()
    static let greeting = "220 mx.test ESMTP AppleIDMock\r\n"
    static let ehloReply = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n"
    static let ehloReplyWithTLS = "250-mx.test\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250-ENHANCEDSTATUSCODES\r\n250 STARTTLS\r\n"
    static let ok = "250 2.0.0 Ok\r\n"
    static let shuttingDown = "421 4.3.2 mx.test Service shutting down\r\n"

    /// One message's commands after EHLO, with a stuffed dot, and the replies to them.
    static let transaction = "MAIL FROM:<alice@client.test>\r\nRCPT TO:<bob@mx.test>\r\nDATA\r\n"
        + "Subject: hi\r\n\r\n..leading dot\r\nbody\r\n.\r\n"
    static let transactionReplies = "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued\r\n"
    /// The text `transaction` delivers: dot-unstuffed, without the final dot.
    static let transactionText = "Subject: hi\r\n\r\n.leading dot\r\nbody\r\n"

    /// A server with HTTP (`ServerFixture`'s routes, relaxed timeouts) and SMTP for `handler` as
    /// `mx.test`, both on ephemeral ports; `adjust` changes either before it starts.
    func start(handler: SMTPTestHandler = SMTPTestHandler(), tls: Bool = false,
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

    func connect(_ server: HTTPServer, receiveBuffer: Int32? = nil) throws -> Wire {
        try Wire(port: try XCTUnwrap(server.smtpPort), receiveBuffer: receiveBuffer)
    }

    /// A client that has been greeted.
    func greeted(_ server: HTTPServer, file: StaticString = #filePath, line: UInt = #line) throws -> Wire {
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

    // MARK: - Helpers

    /// SplitMix64: a seeded generator, so a failing round can be replayed.
    struct SplitMix {
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
    final class Wire {
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
