import CMiniHTTP
import Glibc

/// One SMTP client's connection on an event loop, confined to the loop's thread: the socket
/// (plain, then TLS after `STARTTLS`), the replies waiting to leave, and the `SMTPSession` that
/// decides them. The session is pure; this class only moves bytes and keeps time.
///
/// Replies are written as they are made. A client that sends commands without reading the
/// replies is not read further once `maxPendingOutput` bytes wait for it, so what it costs
/// stays bounded; the write timeout then drops it. What the session holds of a message counts
/// against SMTP's own budget (`maxBufferedMessageBytes`, apart from HTTP's body budget), at most
/// a quarter of it per session: when either runs out, the client is told 452 and let go, so many
/// half-sent messages cannot exhaust memory. Once half the budget is held, a message's text must
/// come at `minDataRate` over each `dataRateWindow`, or the client is told 421 and let go.
final class SMTPConnection: LoopConnection {
    /// Reply bytes that may wait for a client before its input is no longer read.
    static let maxPendingOutput = 64 * 1024

    let id: UInt64
    let fd: Int32
    unowned let loop: EventLoop
    /// The port it came from: its configuration, session count and message budget.
    private let listener: SMTPListener
    private let configuration: SMTPServerConfiguration
    private var session: SMTPSession
    private(set) var isClosed = false
    /// The TLS session once `STARTTLS` was answered; nil while plain.
    private(set) var tls: TLSServerSession?
    /// A TLS handshake is under way (after the `220` to `STARTTLS` left).
    private var handshaking = false
    /// What TLS waits for besides the connection's own events (0: nothing).
    private var tlsWants: UInt32 = 0
    /// Epoll events currently registered.
    private var interest: UInt32 = MH_EPOLLIN
    private var output: [UInt8] = []
    private var outputSent = 0
    /// Close once the queued replies are out (QUIT, a fatal error, the idle timeout, draining).
    private var closeAfterWrite = false
    /// Begin the TLS handshake once the queued replies are out.
    private var startTLSAfterWrite = false
    /// Monotonic ns of the client's last bytes (or of the connection's start, or of the
    /// handshake's end): the idle timeout counts from here.
    private var lastInput: UInt64
    /// Monotonic ns since when replies have been waiting to leave; nil when none wait.
    private var writePendingSince: UInt64?
    /// Bytes of the session's buffers reserved against the server's body budget.
    private var reservedBytes = 0
    /// Monotonic ns when the message being received began (DATA's 354); nil between messages.
    private var messageStarted: UInt64?
    /// Monotonic ns the current rate window began, and the message bytes read in it.
    private var rateWindowStarted: UInt64 = 0
    private var rateWindowBytes = 0

    init(id: UInt64, fd: Int32, loop: EventLoop, listener: SMTPListener, now: UInt64) {
        let configuration = listener.configuration
        self.id = id
        self.fd = fd
        self.loop = loop
        self.listener = listener
        self.configuration = configuration
        self.session = SMTPSession(hostname: configuration.hostname, limits: configuration.limits,
                                   tlsAvailable: configuration.tls != nil, handler: configuration.handler)
        self.lastInput = now
    }

    /// Sends the greeting.
    func start(now: UInt64) {
        queue(session.greeting, now: now)
        flush(now: now)
    }

    /// Epoll reported `flags` for this connection.
    func event(_ flags: UInt32, scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        if flags & MH_EPOLLERR != 0 {
            loop.close(self)
            return
        }
        if handshaking {
            continueHandshake(now: now)
            return
        }
        if flags & MH_EPOLLOUT != 0 && tlsWants == MH_EPOLLOUT && outputSent >= output.count {
            // A TLS read that had to write first: read again (waiting for writability meanwhile would spin).
            tlsWants = 0
            read(into: scratch, now: now)
            return
        }
        if flags & MH_EPOLLOUT != 0 || (tlsWants == MH_EPOLLIN && flags & MH_EPOLLIN != 0 && outputSent < output.count) {
            flush(now: now)
        }
        guard !isClosed else { return }
        if flags & MH_EPOLLIN != 0 && acceptsInput {
            read(into: scratch, now: now)
        } else if flags & MH_EPOLLHUP != 0 {
            loop.close(self)
        }
    }

    /// Whether the client's bytes are read now.
    private var acceptsInput: Bool {
        !closeAfterWrite && !startTLSAfterWrite && !handshaking && output.count - outputSent < Self.maxPendingOutput
    }

    /// Reads what the socket has (a bounded amount per turn) and feeds it to the session.
    private func read(into scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        var total = 0
        while total < 4 * scratch.count && acceptsInput {
            guard let count = receive(into: scratch) else { break }
            if count == 0 {
                // The client sent all it will: the replies to what came before still go (a
                // "250 queued" lost would invite the message again), then the connection closes.
                closeAfterWrite = true
                break
            }
            total += count
            lastInput = now
            let receiving = session.isReceivingMessage
            let answer = session.receive(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            queue(answer.bytes, now: now)
            if session.isReceivingMessage {
                if messageStarted == nil {
                    messageStarted = now
                    rateWindowStarted = now
                    rateWindowBytes = 0
                } else if receiving {
                    rateWindowBytes += count
                }
            } else {
                messageStarted = nil
            }
            guard reserveBuffered() else {
                queue(Array("452 4.3.1 \(configuration.hostname) Error: insufficient system storage\r\n".utf8), now: now)
                closeAfterWrite = true
                break
            }
            switch answer.action {
            case .none: break
            case .close: closeAfterWrite = true
            case .startTLS: startTLSAfterWrite = true
            }
            if tls == nil && count < scratch.count { break }
        }
        guard !isClosed else { return }
        flush(now: now)
    }

    /// Writes queued replies until done or the socket is full, then does what waited for them.
    private func flush(now: UInt64) {
        while outputSent < output.count {
            let sent = output.withUnsafeBytes { bytes in transmit(bytes.baseAddress! + outputSent, bytes.count - outputSent) }
            guard let sent else {
                if !isClosed { updateInterest() }
                return
            }
            outputSent += sent
        }
        output.removeAll(keepingCapacity: output.capacity <= 16 * 1024)
        outputSent = 0
        writePendingSince = nil
        if closeAfterWrite {
            loop.close(self)
            return
        }
        if startTLSAfterWrite {
            startTLSAfterWrite = false
            beginTLS(now: now)
            return
        }
        updateInterest()
    }

    private func queue(_ bytes: [UInt8], now: UInt64) {
        guard !bytes.isEmpty else { return }
        if writePendingSince == nil { writePendingSince = now }
        if output.isEmpty { output = bytes } else { output.append(contentsOf: bytes) }
    }

    // MARK: - STARTTLS

    private func beginTLS(now: UInt64) {
        guard let context = configuration.tls, tls == nil, let session = TLSServerSession(context: context, fd: fd) else {
            loop.close(self)
            return
        }
        tls = session
        handshaking = true
        // The handshake is timed like silence: a client that stalls in it is dropped.
        lastInput = now
        continueHandshake(now: now)
    }

    private func continueHandshake(now: UInt64) {
        guard let tls else { return }
        switch tls.handshake() {
        case .done:
            handshaking = false
            tlsWants = 0
            lastInput = now
            session.tlsStarted()
            updateInterest()
        case .wantsRead:
            tlsWants = MH_EPOLLIN
            updateInterest()
        case .wantsWrite:
            tlsWants = MH_EPOLLOUT
            updateInterest()
        case .closed, .failed, .plaintextHTTP:
            // A client that answers 220 with plain commands is not speaking TLS: nothing it
            // sends is read as a command (RFC 3207 §4).
            loop.close(self)
        }
    }

    // MARK: - Socket

    /// One read, through TLS when there is TLS: bytes read, 0 at the end, nil when it would
    /// block; closes the connection on an error (then also nil).
    private func receive(into scratch: UnsafeMutableRawBufferPointer) -> Int? {
        switch SocketIO.read(fd, tls, into: scratch, wants: &tlsWants) {
        case .moved(let count): return count
        case .ended: return 0
        case .wouldBlock: return nil
        case .failed:
            loop.close(self)
            return nil
        }
    }

    /// One write to the socket, through TLS when there is TLS: bytes written, nil when it would
    /// block; closes the connection on an error (then also nil).
    private func transmit(_ bytes: UnsafeRawPointer, _ count: Int) -> Int? {
        switch SocketIO.write(fd, tls, bytes, count, wants: &tlsWants) {
        case .moved(let sent): return sent
        case .wouldBlock: return nil
        case .ended, .failed:
            loop.close(self)
            return nil
        }
    }

    /// Registers the epoll events the connection needs now.
    private func updateInterest() {
        guard !isClosed else { return }
        var wanted: UInt32 = 0
        if acceptsInput { wanted |= MH_EPOLLIN }
        if outputSent < output.count { wanted |= MH_EPOLLOUT }
        if tlsWants != 0 { wanted = tlsWants }
        if wanted != interest {
            interest = wanted
            loop.modify(self, events: wanted)
        }
    }

    // MARK: - Time and the end

    /// Applies the timeouts: replies waiting too long drop the connection; a client silent too
    /// long is told 421 and the connection closes.
    func checkTimeouts(now: UInt64) {
        if let since = writePendingSince, Connection.seconds(from: since, to: now) > configuration.writeTimeout {
            loop.close(self)
            return
        }
        if !closeAfterWrite, messageStarted != nil, Connection.seconds(from: rateWindowStarted, to: now) >= configuration.dataRateWindow {
            // Under pressure a message must keep the minimum rate over each window (eight
            // sessions each sending a byte per 200 s held the budget for the whole data timeout).
            let needed = Double(configuration.minDataRate) * configuration.dataRateWindow
            if reservedBytes > 0 && listener.messageBudgetUnderPressure && Double(rateWindowBytes) < needed {
                closeAfterWrite = true
                startTLSAfterWrite = false
                queue(SMTPReply(421, "4.4.2", "\(configuration.hostname) Error: message data too slow while the server is busy").bytes, now: now)
                flush(now: now)
                return
            }
            rateWindowStarted = now
            rateWindowBytes = 0
        }
        let messageTooSlow = messageStarted.map { Connection.seconds(from: $0, to: now) > configuration.dataTimeout } ?? false
        guard !closeAfterWrite, messageTooSlow || Connection.seconds(from: lastInput, to: now) > configuration.idleTimeout else { return }
        if handshaking {
            loop.close(self)
            return
        }
        closeAfterWrite = true
        startTLSAfterWrite = false
        queue(session.timeoutReply(), now: now)
        flush(now: now)
    }

    /// The server is stopping: a client is told 421 and let go; one in the middle of a TLS
    /// handshake, which cannot be told anything yet, is closed.
    func drain(now: UInt64) {
        if handshaking {
            loop.close(self)
            return
        }
        guard !closeAfterWrite else { return }
        closeAfterWrite = true
        startTLSAfterWrite = false
        queue(Array("421 4.3.2 \(configuration.hostname) Service shutting down\r\n".utf8), now: now)
        flush(now: now)
    }

    /// SMTP sets no timers of its own: its timeouts are the sweep's.
    func timerFired(now: UInt64) {}

    /// Marks the connection closed (the loop closes the descriptor); sends close_notify over TLS,
    /// returns its reservation to SMTP's budget and uncounts its session.
    func willClose() {
        isClosed = true
        tls?.shutdown()
        listener.releaseMessageBytes(reservedBytes)
        reservedBytes = 0
        listener.abandon()
    }

    /// Brings the reservation to what the session holds now; false when the session's cap or
    /// SMTP's budget cannot cover it.
    private func reserveBuffered() -> Bool {
        let held = session.bufferedBytes
        if held > reservedBytes {
            guard held <= configuration.maxSessionBufferedBytes, listener.reserveMessageBytes(held - reservedBytes) else { return false }
        } else if held < reservedBytes {
            listener.releaseMessageBytes(reservedBytes - held)
        }
        reservedBytes = held
        return true
    }
}
