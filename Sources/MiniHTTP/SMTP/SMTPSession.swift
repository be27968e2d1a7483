/// The server side of one SMTP conversation (RFC 5321, with RFC 1870 SIZE, RFC 2034 enhanced
/// status codes, RFC 2920 pipelining, RFC 3207 STARTTLS and RFC 6152 8BITMIME). Pure: bytes in,
/// bytes out, no sockets, no clock; the owner (an event loop's connection) moves the bytes, runs
/// TLS and the idle timeout.
///
/// Input is judged one byte at a time against the bytes before it alone, so how the stream was
/// cut into reads never changes the outcome. Every buffer is bounded: one command line
/// (`maxCommandLineBytes`) or the message being received (`maxMessageBytes`; a longer one is read
/// to its dot without being kept).
public struct SMTPSession: Sendable {
    /// What the owner does after sending `Output.bytes`.
    public enum Action: Sendable, Equatable {
        /// Nothing: keep reading.
        case none
        /// Begin the TLS handshake (after STARTTLS was accepted); call `tlsStarted()` when done.
        case startTLS
        /// Close the connection (after QUIT, a fatal error, or a 421).
        case close
    }

    /// The answer to one `receive`.
    public struct Output: Sendable, Equatable {
        /// Everything to send now, replies in the order of the commands they answer.
        public var bytes: [UInt8]
        /// What to do once the bytes are sent.
        public var action: Action

        /// An output with the given bytes and action.
        public init(bytes: [UInt8], action: Action) {
            self.bytes = bytes
            self.action = action
        }
    }

    /// Where the conversation stands.
    enum Phase: Sendable, Equatable {
        /// Reading command lines.
        case command
        /// Reading message text after DATA's 354, up to the line holding one dot.
        case data
        /// STARTTLS was accepted; plaintext input is discarded until `tlsStarted()`.
        case awaitingTLS
        /// QUIT or a fatal error: input is ignored.
        case closed
    }

    /// A mail transaction begun by an accepted MAIL FROM (RFC 5321 §3.3).
    struct Transaction: Sendable {
        /// The reverse-path without `<>`; "" for the null path.
        var sender: String
        /// BODY=8BITMIME was given.
        var eightBitMIME: Bool
        /// Accepted recipients, in order.
        var recipients: [String] = []
        /// True once a RCPT reached the handler (or the recipient limit): DATA without an
        /// accepted recipient then says "no valid recipients" instead of "need RCPT command".
        var triedRecipient = false
    }

    /// Where the current line of message text stands, for dot-unstuffing (RFC 5321 §4.5.2).
    enum TextLine: Sendable {
        /// No byte of the line yet.
        case start
        /// The line so far is one `.`, not stored: the end of the data if CRLF follows, else a
        /// stuffed dot, removed.
        case dot
        /// Anything else.
        case body
    }

    /// The message being received after DATA's 354.
    struct Incoming: Sendable {
        /// The text kept so far (dot-unstuffed, CRLF line ends).
        var bytes: [UInt8] = []
        /// The current line's state.
        var line: TextLine = .start
        /// Bytes of the current line so far, as sent (a stuffed dot included).
        var lineBytes = 0
        /// The text passed `maxMessageBytes`: no longer kept, refused at the dot (552 5.3.4).
        var tooBig = false
        /// A line passed `maxTextLineBytes`: refused at the dot (500 5.5.2).
        var lineTooLong = false
        /// A NUL byte arrived: refused at the dot (554 5.6.0).
        var hasNUL = false
    }

    /// The name this server gives in its greeting and replies.
    public let hostname: String
    /// The bounds this session enforces.
    public let limits: SMTPLimits
    /// True when the owner can run TLS on this connection (STARTTLS is offered until it has).
    public let tlsAvailable: Bool
    /// Asked for verdicts on senders, recipients and messages.
    let handler: any SMTPHandler

    /// Where the conversation stands.
    var phase: Phase = .command
    /// True after `tlsStarted()`.
    var tlsActive = false
    /// The EHLO/HELO argument, nil until one was accepted.
    var heloName: String?
    /// The mail transaction in progress, nil outside one.
    var transaction: Transaction?
    /// Protocol errors so far, against `limits.maxErrors`.
    var errors = 0
    /// The command line being received, without its CR.
    var line: [UInt8] = []
    /// The command line passed `maxCommandLineBytes`: its bytes are dropped until its CRLF.
    var lineTooLong = false
    /// The last byte was a CR not yet known to start a CRLF.
    var pendingCR = false
    /// The message being received (empty outside the data phase).
    var incoming = Incoming()

    /// A session that has not yet greeted: send `greeting` first.
    public init(hostname: String, limits: SMTPLimits, tlsAvailable: Bool, handler: any SMTPHandler) {
        self.hostname = hostname
        self.limits = limits
        self.tlsAvailable = tlsAvailable
        self.handler = handler
    }

    /// The opening `220 <hostname> ESMTP AppleIDMock` (RFC 5321 §4.3.1; no enhanced code, RFC 2034 §3).
    public var greeting: [UInt8] {
        SMTPReply(code: 220, lines: ["\(hostname) ESMTP AppleIDMock"]).bytes
    }

    /// What the owner sends when the idle timeout passed, before it closes (Postfix's words).
    public func timeoutReply() -> [UInt8] {
        SMTPReply(421, "4.4.2", "\(hostname) Error: timeout exceeded").bytes
    }

    /// Bytes held now: the command line being received plus the message being received. At most
    /// `maxCommandLineBytes`, or `maxMessageBytes` while a message arrives.
    public var bufferedBytes: Int { line.count + incoming.bytes.count }

    /// True after QUIT or a fatal error: `receive` ignores input and asks for `.close`.
    public var isClosed: Bool { phase == .closed }

    /// Whether a message's text is being received (between DATA's 354 and the final dot).
    public var isReceivingMessage: Bool { phase == .data }

    /// Feeds bytes as they arrived; any split gives the same replies as the bytes at once.
    /// Every complete command line is answered in order (RFC 2920 pipelining); after DATA's 354
    /// the input is message text. `.startTLS`: send the bytes, then begin the handshake; the
    /// input after the STARTTLS line is discarded (RFC 3207 §4: it was sent in the clear, before
    /// the handshake, and could be injected), as is any input until `tlsStarted()`. `.close`:
    /// send the bytes, then close; every later call answers `.close` with nothing to send.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Output {
        switch phase {
        case .closed: return Output(bytes: [], action: .close)
        case .awaitingTLS: return Output(bytes: [], action: .none)
        case .command, .data: break
        }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if phase == .data && !pendingCR, case .body = incoming.line {
                // Fast path through a run of ordinary text bytes; the same steps as one at a time.
                var end = index
                while end < bytes.count {
                    let byte = bytes[end]
                    if byte == 13 || byte == 10 || byte == 0 { break }
                    end += 1
                }
                if end > index {
                    noteTextBytes(end - index)
                    keep(UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                    index = end
                    continue
                }
            }
            consume(bytes[index], into: &out)
            index += 1
            switch phase {
            case .closed: return Output(bytes: out, action: .close)
            case .awaitingTLS: return Output(bytes: out, action: .startTLS)
            case .command, .data: break
            }
        }
        return Output(bytes: out, action: .none)
    }

    /// The handshake finished. RFC 3207 §4.2: the session starts over as after the greeting
    /// (EHLO and any transaction forgotten), and STARTTLS is no longer offered.
    public mutating func tlsStarted() {
        tlsActive = true
        heloName = nil
        transaction = nil
        line.removeAll()
        lineTooLong = false
        pendingCR = false
        incoming = Incoming()
        if phase != .closed { phase = .command }
    }

    // MARK: - Bytes

    /// One byte, in the command or data phase.
    private mutating func consume(_ byte: UInt8, into out: inout [UInt8]) {
        if byte == 10 {
            guard pendingCR else {
                // An LF without its CR: Postfix's smtpd_forbid_bare_newline. Ending lines only at
                // CRLF, and refusing a bare LF, keeps another server from seeing a different end
                // of data than this one (SMTP smuggling).
                out += SMTPReply(521, "5.5.2", "\(hostname) Error: bare <LF> received").bytes
                phase = .closed
                return
            }
            pendingCR = false
            if phase == .data { endTextLine(into: &out) } else { endCommandLine(into: &out) }
            return
        }
        if pendingCR {
            pendingCR = false
            if phase == .data {
                // A CR without its LF in message text: refused as a bare LF is. `<CR>.<CR>` is the
                // other half of the SMTP smuggling family (a server that ends lines at a bare CR
                // sees an end of data here); sendmail 8.18 refuses bare CR too.
                out += SMTPReply(521, "5.5.2", "\(hostname) Error: bare <CR> received").bytes
                phase = .closed
                return
            }
            // In a command, the CR before was not the start of a CRLF: a byte of the line, which
            // makes it a syntax error (`handleCommand`).
            ordinary(13)
        }
        if byte == 13 {
            pendingCR = true
        } else {
            ordinary(byte)
        }
    }

    /// A byte of the current line that is not part of its CRLF.
    private mutating func ordinary(_ byte: UInt8) {
        if phase == .data {
            noteTextBytes(1)
            if byte == 0 { incoming.hasNUL = true }
            switch incoming.line {
            case .start where byte == UInt8(ascii: "."):
                incoming.line = .dot
            case .start, .dot, .body:
                // After a leading dot, this byte is kept and the dot is not (dot-unstuffing).
                incoming.line = .body
                keep(byte)
            }
            return
        }
        guard !lineTooLong else { return }
        // The line with this byte and a CRLF must fit (RFC 5321 §4.5.3.1.4: CRLF included).
        if line.count + 3 > limits.maxCommandLineBytes {
            lineTooLong = true
            line.removeAll()
        } else {
            line.append(byte)
        }
    }

    /// Counts `count` bytes of the current text line, as sent.
    private mutating func noteTextBytes(_ count: Int) {
        incoming.lineBytes += count
        if incoming.lineBytes > limits.maxTextLineBytes - 2 { incoming.lineTooLong = true }
    }

    /// Keeps one byte of message text, unless the message is already over its limit.
    private mutating func keep(_ byte: UInt8) {
        withUnsafeBytes(of: byte) { keep($0) }
    }

    /// Keeps message text; once it would pass `maxMessageBytes`, drops all of it and keeps nothing more.
    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        guard !incoming.tooBig else { return }
        guard bytes.count <= limits.maxMessageBytes - incoming.bytes.count else {
            incoming.tooBig = true
            incoming.bytes = []
            return
        }
        incoming.bytes.append(contentsOf: bytes)
    }

    /// A CRLF ended a command line.
    private mutating func endCommandLine(into out: inout [UInt8]) {
        if lineTooLong {
            lineTooLong = false
            refuse(SMTPReply(500, "5.5.2", "Error: line too long"), into: &out)
            return
        }
        let command = line
        line.removeAll(keepingCapacity: true)
        handleCommand(command[...], into: &out)
    }

    /// A CRLF ended a line of message text: the end of the data if the line was one dot.
    private mutating func endTextLine(into out: inout [UInt8]) {
        if case .dot = incoming.line {
            finishMessage(into: &out)
            return
        }
        withUnsafeBytes(of: (UInt8(13), UInt8(10))) { keep($0) }
        incoming.line = .start
        incoming.lineBytes = 0
    }

    // MARK: - Replies

    /// Sends a reply to a protocol error and counts it; at `maxErrors` adds 421 and closes.
    mutating func refuse(_ reply: SMTPReply, into out: inout [UInt8]) {
        out += reply.bytes
        errors += 1
        if errors >= limits.maxErrors {
            out += SMTPReply(421, "4.7.0", "\(hostname) Error: too many errors").bytes
            phase = .closed
        }
    }

    /// Sends a handler's reply; a 421 also closes (RFC 5321 §3.8).
    mutating func send(_ reply: SMTPReply, into out: inout [UInt8]) {
        out += reply.bytes
        if reply.wireCode == 421 { phase = .closed }
    }
}
