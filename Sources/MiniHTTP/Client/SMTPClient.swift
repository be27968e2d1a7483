/// Sends one message over plain SMTP (RFC 5321), blocking the calling thread but never longer
/// than its timeouts: for threads made to wait (a mail relay's sender), never for an event loop
/// or the cooperative pool. Uses `HTTPClient`'s socket helpers. No TLS, no pipelining: one
/// command, one reply. Replies are bounded (`maxReplyBytes`).
public struct SMTPClient: Sendable {
    /// Why a message was not sent, in words for a log.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// An address or the HELO name cannot go into a command (empty where a value is needed,
        /// or holding `<`, `>`, a space outside quotes, CR, LF or another control byte).
        case invalidInput(String)
        /// The name did not resolve, nothing accepted the connection, or it broke.
        case connect(String)
        /// Nothing happened within the time allowed.
        case timeout(String)
        /// The server refused: what was refused and its reply (every refused recipient named).
        case refused(String)
        /// The server answered something that is not an SMTP reply, or closed early.
        case malformed(String)

        /// The explanation.
        public var description: String {
            switch self {
            case .invalidInput(let why): "cannot send: \(why)"
            case .connect(let why): "connect: \(why)"
            case .timeout(let what): "timed out: \(what)"
            case .refused(let what): "refused: \(what)"
            case .malformed(let why): "bad reply: \(why)"
            }
        }
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// Seconds to connect.
    public var connectTimeout: Double = 5
    /// Seconds for each command and its reply (the greeting, and the message text with the
    /// reply to its final dot, count as one command each).
    public var commandTimeout: Double = 30
    /// The name this client gives in EHLO (or HELO).
    public var heloName = "localhost"
    /// Longest reply read, all its lines together.
    public var maxReplyBytes = 64 * 1024

    /// A client for `host:port` with the defaults above.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Sends `data` from `sender` ("" for the null path) to every recipient, as one transaction:
    /// greeting, EHLO (HELO when EHLO is refused with 5xx), MAIL FROM, RCPT TO for each, DATA
    /// with the text dot-stuffed and its line ends made CRLF, QUIT. A refused recipient fails the
    /// whole send before DATA (no message goes to only some of them), naming each refused one.
    public func send(sender: String, recipients: [String], data: [UInt8]) throws(Failure) {
        guard Self.isSendable(sender, allowingEmpty: true) else { throw .invalidInput("sender \"\(sender)\"") }
        guard !recipients.isEmpty else { throw .invalidInput("no recipients") }
        for recipient in recipients where !Self.isSendable(recipient, allowingEmpty: false) {
            throw .invalidInput("recipient \"\(recipient)\"")
        }
        guard !heloName.isEmpty, heloName.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw .invalidInput("HELO name \"\(heloName)\"") }

        let connectDeadline = Self.deadline(after: connectTimeout)
        let fd: Int32
        do { fd = try HTTPClient.connect(host, port, deadline: connectDeadline) } catch { throw Self.failure(error) }
        defer { Syscall.close(fd) }
        var exchange = Exchange(fd: fd, timeout: commandTimeout, reader: ReplyReader(maxReplyBytes: maxReplyBytes))
        defer { exchange.deallocate() }

        let greeting = try exchange.reply(doing: "waiting for the greeting")
        guard greeting.code == 220 else { return try exchange.abandon(.refused("greeting: \(greeting.text)")) }

        var extensions: [String] = []
        let ehlo = try exchange.command("EHLO \(heloName)")
        if ehlo.code == 250 {
            extensions = ehlo.lines.dropFirst().map { $0.uppercased() }
        } else if (500...599).contains(ehlo.code) {
            // RFC 5321 §3.2: a server that does not know EHLO answers 5xx; try HELO.
            let helo = try exchange.command("HELO \(heloName)")
            guard helo.code == 250 else { return try exchange.abandon(.refused("HELO \(heloName): \(helo.text)")) }
        } else {
            return try exchange.abandon(.refused("EHLO \(heloName): \(ehlo.text)"))
        }

        let message = Self.encode(data)
        var mail = "MAIL FROM:<\(sender)>"
        // RFC 1870: declare the size when the server takes SIZE, and give up early if it is over.
        if let sizeLine = extensions.first(where: { $0 == "SIZE" || $0.hasPrefix("SIZE ") }) {
            if let limit = Int(sizeLine.dropFirst(4).trimmingSpaces()), limit > 0, message.size > limit {
                return try exchange.abandon(.refused("message of \(message.size) bytes is over the server's SIZE \(limit)"))
            }
            mail += " SIZE=\(message.size)"
        }
        // RFC 6152: say so when the text has 8-bit bytes and the server takes them.
        if extensions.contains("8BITMIME") && data.contains(where: { $0 >= 0x80 }) { mail += " BODY=8BITMIME" }
        let mailReply = try exchange.command(mail)
        guard mailReply.isPositive else { return try exchange.abandon(.refused("MAIL FROM:<\(sender)>: \(mailReply.text)")) }

        var refusals: [String] = []
        for recipient in recipients {
            let reply = try exchange.command("RCPT TO:<\(recipient)>")
            if !reply.isPositive { refusals.append("RCPT TO:<\(recipient)>: \(reply.text)") }
        }
        guard refusals.isEmpty else { return try exchange.abandon(.refused(refusals.joined(separator: "; "))) }

        let dataReply = try exchange.command("DATA")
        guard dataReply.code == 354 else { return try exchange.abandon(.refused("DATA: \(dataReply.text)")) }
        let accepted = try exchange.send(message.wire, doing: "sending the message")
        guard accepted.isPositive else { return try exchange.abandon(.refused("message: \(accepted.text)")) }
        // The message is taken: a QUIT that goes wrong changes nothing.
        _ = try? exchange.command("QUIT")
    }

    /// True when `address` can go between `<` and `>`: printable ASCII, no `<` or `>`, spaces only
    /// inside a quoted local part; empty only when allowed (the null reverse-path).
    static func isSendable(_ address: String, allowingEmpty: Bool) -> Bool {
        guard !address.isEmpty else { return allowingEmpty }
        var quoted = false
        var escaped = false
        for byte in address.utf8 {
            guard byte >= 32 && byte < 127 && byte != UInt8(ascii: "<") && byte != UInt8(ascii: ">") else { return false }
            if escaped {
                escaped = false
            } else if quoted && byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == 32 && !quoted {
                return false
            }
        }
        return !quoted
    }

    /// The message text as sent after DATA (RFC 5321 §4.5.2, §2.3.8): every LF made CRLF, a dot
    /// doubled at the start of a line, a CRLF added if the text does not end with one, then the
    /// final `.` line. `size` counts the text without the doubled dots and the final line (RFC 1870).
    static func encode(_ data: [UInt8]) -> (wire: [UInt8], size: Int) {
        var wire: [UInt8] = []
        wire.reserveCapacity(data.count + data.count / 32 + 8)
        var atLineStart = true
        var size = 0
        var previous: UInt8 = 0
        for byte in data {
            if byte == 10 {
                if previous != 13 {
                    wire.append(13)
                    size += 1
                }
                wire.append(10)
                size += 1
                atLineStart = true
            } else {
                if atLineStart && byte == UInt8(ascii: ".") { wire.append(byte) }
                wire.append(byte)
                size += 1
                atLineStart = false
            }
            previous = byte
        }
        if !atLineStart {
            wire += [13, 10]
            size += 2
        }
        wire += Array(".\r\n".utf8)
        return (wire, size)
    }

    /// A deadline `seconds` from now on the monotonic clock.
    static func deadline(after seconds: Double) -> UInt64 {
        Syscall.monotonicNanoseconds() + UInt64(max(0.001, seconds) * 1e9)
    }

    /// `HTTPClient`'s socket failures in this client's terms.
    static func failure(_ error: HTTPClient.Failure) -> Failure {
        switch error {
        case .connect(let why): .connect(why)
        case .timeout(let what): .timeout(what)
        case .invalidURL(let why), .tls(let why), .malformed(let why): .malformed(why)
        }
    }
}

extension SMTPClient {
    /// One connection's commands and replies.
    struct Exchange {
        /// The connected socket (owned by `send`).
        let fd: Int32
        /// Seconds for each command and its reply.
        let timeout: Double
        /// Replies read so far.
        var reader: ReplyReader
        /// Where reads land; freed by `deallocate()`.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)

        /// Frees the read buffer.
        func deallocate() { buffer.deallocate() }

        /// Sends `line` and a CRLF, and reads the reply.
        mutating func command(_ line: String) throws(Failure) -> SMTPReply {
            try send(Array("\(line)\r\n".utf8), doing: line)
        }

        /// Sends `bytes` and reads the reply, within one `timeout`. A 421 ends the conversation
        /// (RFC 5321 §3.8): it is thrown as a refusal of `what`.
        mutating func send(_ bytes: [UInt8], doing what: String) throws(Failure) -> SMTPReply {
            let deadline = SMTPClient.deadline(after: timeout)
            do { try HTTPClient.write(fd, bytes, deadline: deadline, doing: what) } catch { throw SMTPClient.failure(error) }
            let reply = try read(until: deadline, doing: "the reply to \(what)")
            if reply.code == 421 { throw .refused("\(what): \(reply.text)") }
            return reply
        }

        /// Reads one reply within one `timeout`.
        mutating func reply(doing what: String) throws(Failure) -> SMTPReply {
            try read(until: SMTPClient.deadline(after: timeout), doing: what)
        }

        private mutating func read(until deadline: UInt64, doing what: String) throws(Failure) -> SMTPReply {
            while true {
                if let reply = try reader.next() { return reply }
                let count: Int
                do { count = try HTTPClient.read(fd, into: buffer, deadline: deadline, doing: what) } catch { throw SMTPClient.failure(error) }
                guard count > 0 else { throw .malformed("connection closed while \(what)") }
                reader.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }

        /// Says QUIT (best effort, without waiting long for its reply), then throws `failure`.
        mutating func abandon(_ failure: Failure) throws(Failure) {
            let deadline = SMTPClient.deadline(after: min(timeout, 2))
            if (try? HTTPClient.write(fd, Array("QUIT\r\n".utf8), deadline: deadline, doing: "QUIT")) != nil {
                _ = try? read(until: deadline, doing: "the reply to QUIT")
            }
            throw failure
        }
    }
}
