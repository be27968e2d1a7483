import CMiniHTTP
import Glibc

/// One client connection's state machine. Confined to its event loop's thread.
///
/// reading → (request parsed) → handling → (response queued) → writing → reading | closed.
/// Only one request is handled at a time, so pipelined responses leave in request order. A
/// response delivered with a delay waits in `handling`; one that stalls (`HTTPDelivery.Cut.stall`)
/// ends in `stalled`, where nothing more is sent and the client's bytes are read and dropped.
final class Connection: LoopConnection {
    enum State { case reading, handling, writing, stalled, closed }

    let id: UInt64
    let fd: Int32
    unowned let loop: EventLoop
    /// The port it came from: its routes, observer and limits.
    let listener: HTTPListener
    var parser: HTTPRequestParser
    var state: State = .reading
    /// Epoll events currently registered.
    var interest: UInt32 = MH_EPOLLIN
    /// Bytes queued for the client and how many of them have gone.
    var output: [UInt8] = []
    var outputSent = 0
    /// The client shut down its sending side; answer what is complete, then close.
    var peerClosedInput = false
    /// Whether the connection closes once the current response is written.
    var closeAfterResponse = false
    var continueSent = false
    /// True while `processInput` runs: a response finished inside it returns to that loop instead
    /// of recursing, so a burst of pipelined requests cannot overflow the loop thread's stack.
    private var processingInput = false
    /// Monotonic times (ns). `idleSince`: when the connection last became idle (accepted, or
    /// its last response fully written); bytes received do not move it. `requestStarted`: the
    /// current request's first byte, empty lines before its request line included (RFC 9112 §2.2),
    /// so a trickle of empty lines is timed like a slow head. `responseQueued`: when the response
    /// being written was queued; the write timeout is a deadline from there, which a client
    /// reading a few bytes at a time cannot push back.
    var idleSince: UInt64
    var requestStarted: UInt64?
    var responseQueued: UInt64 = 0
    /// Request-body bytes this connection holds against the server's `maxBufferedBodyBytes`:
    /// grows as body bytes arrive, returned when the response is queued or the connection closes.
    private(set) var reservedBodyBytes = 0

    /// The TLS session on an HTTPS port; nil for plain HTTP.
    let tls: TLSServerSession?
    /// Epoll events TLS needs besides the state's own: the handshake's next step, or a read
    /// that must write first (or a write that must read first). 0 when it needs nothing extra.
    private var tlsWants: UInt32 = 0
    /// The client's address, read only when the server has an exchange observer.
    let peer: HTTPPeerAddress?
    /// The exchange being handled, held for the observer: set only when one is installed. Its
    /// request is moved in once the handler is done with it (a deferred handler's, as it starts).
    private var observed: (id: UInt64, request: HTTPRequest?, started: UInt64)?
    /// A response waiting for its delivery's delay (`HTTPDelivery.delayMilliseconds`).
    private var delayed: (response: HTTPResponse, headOnly: Bool, minorVersion: Int, reason: HTTPExchange.Reason?)?
    /// The response being written stalls once its bytes are out (`HTTPDelivery.Cut.stall`).
    private var stallsAfterWrite = false

    init(id: UInt64, fd: Int32, loop: EventLoop, listener: HTTPListener, tls: TLSServerSession? = nil, peer: HTTPPeerAddress? = nil, now: UInt64) {
        self.id = id
        self.peer = peer
        self.fd = fd
        self.loop = loop
        self.listener = listener
        self.parser = HTTPRequestParser(limits: listener.limits)
        self.idleSince = now
        self.tls = tls
        // The handshake is timed like a request head: a client that stalls in it is dropped.
        if tls != nil { requestStarted = now }
    }

    var isClosed: Bool { state == .closed }

    /// HTTP waits for the client to speak first.
    func start(now: UInt64) {}

    /// Epoll reported `flags` for the socket.
    func event(_ flags: UInt32, scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        if flags & MH_EPOLLERR != 0 {
            loop.close(self)
            return
        }
        if flags & MH_EPOLLOUT != 0 {
            writable(into: scratch, now: now)
        }
        guard state != .closed else { return }
        if flags & MH_EPOLLIN != 0 && acceptsInput {
            readable(into: scratch, now: now)
        } else if flags & MH_EPOLLHUP != 0 {
            // Both directions are gone: nothing can be delivered.
            loop.close(self)
        }
    }

    /// The server stops: an idle connection (no request under way) closes now; the others end
    /// once their response is out.
    func drain(now: UInt64) {
        if state == .reading && !parser.hasPartialRequest { loop.close(self) }
    }

    /// Tells the observer of a request cut off, returns the body reservation and sends TLS's
    /// close_notify.
    func willClose() {
        if listener.observer != nil { reportCutOff() }
        state = .closed
        releaseBodyBudget()
        tls?.shutdown()
    }

    /// Whether readable input is for this connection now: it is reading requests, or a TLS
    /// write waits for the peer's bytes.
    var acceptsInput: Bool { state == .reading || state == .stalled || (state == .writing && tlsWants == MH_EPOLLIN) }

    /// The socket became readable.
    func readable(into scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        if state == .stalled {
            discardInput(into: scratch)
        } else if state == .writing {
            flush(now: now)
        } else {
            readAvailable(into: scratch, now: now)
        }
    }

    /// The socket became writable: queued output goes on, or a TLS handshake or read that
    /// waited to write continues.
    func writable(into scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        if tlsWants == MH_EPOLLOUT && state == .reading {
            readAvailable(into: scratch, now: now)
        } else if tlsWants == MH_EPOLLOUT && outputSent >= output.count {
            // A read that wanted to write, then a request went to its handler: the response's
            // write carries what TLS had to send. Waiting for writability meanwhile would spin.
            tlsWants = 0
            updateInterest()
        } else {
            flush(now: now)
        }
    }

    /// What a plaintext HTTP request to the TLS port is answered, in plain HTTP, before closing.
    static let plaintextRefusal = HTTPResponseSerializer.serialize(plaintextRefusalResponse, keepAlive: false)
    private static let plaintextRefusalResponse = HTTPResponse.text("This port speaks HTTPS; use https://\n", status: .badRequest)

    /// Completes the TLS handshake as far as the socket allows; true once it is done. A finished
    /// handshake leaves the connection idle, as a plain one is when accepted.
    private func handshake(now: UInt64, scratch: UnsafeMutableRawBufferPointer) -> Bool {
        guard let tls, !tls.handshakeDone else { return true }
        switch tls.handshake() {
        case .done:
            tlsWants = 0
            requestStarted = nil
            idleSince = now
            return true
        case .wantsRead:
            tlsWants = 0
        case .wantsWrite:
            tlsWants = MH_EPOLLOUT
        case .closed, .failed:
            loop.close(self)
            return false
        case .plaintextHTTP:
            refusePlaintext(scratch: scratch)
            return false
        }
        updateInterest()
        return false
    }

    /// Answers a plaintext request on the TLS port with a plain 400 and closes. What the client
    /// has sent is read first (a bounded amount), so that closing does not reset the connection
    /// over unread bytes and lose the answer; the answer fits a fresh socket's send buffer, and
    /// if it does not go at once it is dropped with the connection.
    private func refusePlaintext(scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<4 {
            guard let count = try? Syscall.read(fd, scratch.baseAddress!, scratch.count), count == scratch.count else { break }
        }
        _ = Self.plaintextRefusal.withUnsafeBytes { bytes in try? Syscall.send(fd, bytes.baseAddress!, bytes.count) }
        if let observer = listener.observer {
            report(to: observer, Self.plaintextRefusalResponse, headOnly: false, reason: .plaintextOnTLSPort, now: loop.clock.now())
        }
        loop.close(self)
    }

    /// One read from the socket, through TLS when there is TLS: bytes read, 0 at the end of the
    /// stream, nil when it would block; closes the connection on an error (then also nil).
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

    /// Reads what the socket has, then handles what was read.
    func readAvailable(into scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        guard handshake(now: now, scratch: scratch) else { return }
        var total = 0
        while total < 4 * scratch.count {
            guard let count = receive(into: scratch) else {
                if state == .closed { return }
                break
            }
            if count == 0 {
                peerClosedInput = true
                break
            }
            if requestStarted == nil { requestStarted = now }
            parser.append(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            total += count
            // A short plain read took all the socket had: asking again would only return
            // EAGAIN (a wasted syscall per request); the level-triggered epoll reports what comes
            // next. TLS reads on, since OpenSSL can hold decrypted bytes the socket no longer shows.
            if tls == nil && count < scratch.count { break }
        }
        processInput(now: now)
    }

    /// Parses and dispatches as many buffered requests as the state allows.
    func processInput(now: UInt64) {
        guard !processingInput else { return }
        processingInput = true
        defer { processingInput = false }
        while state == .reading {
            let request: HTTPRequest?
            do {
                request = try parser.next()
            } catch {
                fail(error.status, reason: .unparsable(error), now: now)
                return
            }
            guard let request else {
                if peerClosedInput {
                    loop.close(self)
                    return
                }
                // Body bytes count against the budget as they arrive, never by the length a head
                // declares (64 heads declaring 1 MiB each locked every POST out).
                guard reserveBodyBudget(parser.bufferedBodyBytes) else {
                    fail(.serviceUnavailable, reason: .bodyBudgetExhausted, now: now)
                    return
                }
                // Before a 100 Continue: a declared body that cannot fit now is refused before it
                // is sent. Only checked, not reserved.
                if parser.isAwaitingContinue && !continueSent && !loop.core.hasRoomForBodyBytes(parser.pendingBodyBytes - reservedBodyBytes) {
                    fail(.serviceUnavailable, reason: .bodyBudgetExhausted, now: now)
                    return
                }
                if parser.isAwaitingContinue && !continueSent {
                    continueSent = true
                    queue(HTTPResponseSerializer.continueResponse)
                    flush(now: now)
                }
                // `requestStarted` stays set when only empty lines came: they start the header timer.
                updateInterest()
                return
            }
            // A request whose body arrived in the same read as its head is reserved here.
            guard reserveBodyBudget(request.body.count) else {
                fail(.serviceUnavailable, reason: .bodyBudgetExhausted, now: now)
                return
            }
            if listener.observer != nil { observed = (loop.takeExchangeID(), nil, requestStarted ?? now) }
            requestStarted = parser.hasPartialRequest ? now : nil
            continueSent = false
            dispatch(request, now: now)
        }
    }

    private func dispatch(_ request: HTTPRequest, now: UInt64) {
        var request = request
        state = .handling
        // A half-closed client still gets an answer to every complete request it pipelined. The
        // end of its input counts here once read: a FIN that came after a short read is seen on
        // the loop's next turn, so that answer may say keep-alive and the connection then closes.
        closeAfterResponse = !request.wantsKeepAlive || (peerClosedInput && !parser.hasPartialRequest) || loop.isDraining
        let headOnly = request.method == .head
        let minor = request.minorVersion
        let handler = listener.routes.handler(for: &request)
        switch handler {
        case .immediate(let body):
            let response = RouteTable.convert(log: loop.log) { try body(request) }
            if observed != nil { observed?.request = consume request }
            respond(response, headOnly: headOnly, minorVersion: minor, now: now)
        case .deferred:
            if observed != nil { observed?.request = request }
            // The socket is not read while the handler runs elsewhere. An immediate answer needs
            // no such change: it is written before the loop waits again, and a keep-alive
            // connection is back to reading with the events it had (no epoll_ctl per request).
            updateInterest()
            let loop = self.loop
            let id = self.id
            loop.inFlight(+1)
            Task { [request] in
                let response = await RouteTable.run(handler, request, log: loop.log)
                loop.execute { loop in
                    loop.inFlight(-1)
                    (loop.connection(id) as? Connection)?.respond(response, headOnly: headOnly, minorVersion: minor, now: loop.clock.now())
                }
            }
        }
    }

    /// Queues the response to the request being handled and starts writing it (after its
    /// delivery's delay, and cut as its delivery says).
    func respond(_ response: HTTPResponse, headOnly: Bool, minorVersion: Int, reason: HTTPExchange.Reason? = nil, now: UInt64) {
        guard state == .handling else { return }
        let delay = response.delivery.clampedDelay
        if delay > 0 {
            var later = response
            later.delivery.delayMilliseconds = 0
            delayed = (later, headOnly, minorVersion, reason)
            // Nothing is read meanwhile; an immediate handler left the socket's events as they were.
            updateInterest()
            loop.schedule(id, at: now + UInt64(delay) * 1_000_000)
            return
        }
        releaseBodyBudget()
        if loop.isDraining { closeAfterResponse = true }
        var (bytes, refused) = HTTPResponseSerializer.serialized(response, keepAlive: !closeAfterResponse, headOnly: headOnly, minorVersion: minorVersion, log: loop.log)
        if let cut = response.delivery.cut, !refused {
            switch cut {
            case .close, .reset:
                if let observer = listener.observer {
                    report(to: observer, status: nil, headers: HTTPHeaders(), bodyCount: 0, reason: nil, note: response.note, now: now)
                }
                if cut == .reset { setResetOnClose() }
                loop.close(self)
                return
            case .truncate(let count), .stall(let count):
                // The body is the serialized bytes' tail when it was sent (not for HEAD, 204, 304).
                let body = response.body
                let bodySent = !headOnly && !body.isEmpty && bytes.count >= body.count && bytes.suffix(body.count).elementsEqual(body) ? body.count : 0
                bytes.removeLast(bodySent - min(max(count, 0), bodySent))
                if case .stall = cut { stallsAfterWrite = true } else { closeAfterResponse = true }
            }
        }
        queue(bytes)
        // Reported before the write: a finished write may go on to the next pipelined request.
        if let observer = listener.observer {
            var sent = response
            if refused {
                sent = .plainError(.internalServerError)
                sent.note = response.note
            }
            report(to: observer, sent, headOnly: headOnly, reason: reason, now: now)
        }
        state = .writing
        responseQueued = now
        flush(now: now)
    }

    /// The delayed response's time has come.
    func timerFired(now: UInt64) {
        guard let parked = delayed.take() else { return }
        respond(parked.response, headOnly: parked.headOnly, minorVersion: parked.minorVersion, reason: parked.reason, now: now)
    }

    /// Makes closing send an RST (a linger of 0 seconds) instead of a FIN.
    private func setResetOnClose() {
        // A socket that cannot take it still closes, with a FIN: the client sees an end either way.
        _ = try? Syscall.resetOnClose(fd)
    }

    /// A stalled connection reads and drops what the client sends; the end of its input closes it.
    private func discardInput(into scratch: UnsafeMutableRawBufferPointer) {
        for _ in 0..<4 {
            guard let count = receive(into: scratch) else { return }
            if count == 0 {
                loop.close(self)
                return
            }
        }
    }

    /// Answers a protocol error and closes (RFC 9112 §9.6: the rest of the stream is unusable).
    func fail(_ status: HTTPStatus, reason: HTTPExchange.Reason, now: UInt64) {
        state = .handling
        closeAfterResponse = true
        respond(.plainError(status), headOnly: false, minorVersion: 1, reason: reason, now: now)
    }

    /// Hands the observer the exchange answered with `sent` (as the serializer sent it: a
    /// response it refused is the 500 sent in its place).
    private func report(to observer: any HTTPExchangeObserver, _ sent: HTTPResponse, headOnly: Bool, reason: HTTPExchange.Reason?, now: UInt64) {
        report(to: observer, status: sent.status, headers: sent.headers, bodyCount: headOnly ? 0 : sent.body.count, reason: reason, note: sent.note,
               now: now)
    }

    /// Hands the observer the current exchange: the request being handled when there is one.
    private func report(to observer: any HTTPExchangeObserver, status: HTTPStatus?, headers: HTTPHeaders, bodyCount: Int,
                        reason: HTTPExchange.Reason?, note: (any Sendable)? = nil, now: UInt64) {
        let current = observed.take()
        let started = current?.started ?? requestStarted ?? now
        // Over TLS once the handshake is done; the plaintext request refused before it was not.
        observer.observe(HTTPExchange(id: current?.id ?? loop.takeExchangeID(), peer: peer, isTLS: tls?.handshakeDone == true,
                                      request: current?.request ?? nil, status: status, responseHeaders: headers, responseBodyCount: bodyCount,
                                      microseconds: now > started ? (now - started) / 1000 : 0, reason: reason, note: note))
    }

    /// Reports a request cut off by the connection closing: one being handled, or one partly
    /// received. The event loop calls this, when it has an observer, just before closing.
    func reportCutOff() {
        guard let observer = listener.observer, observed != nil || (state == .reading && parser.hasPartialRequest) else { return }
        report(to: observer, status: nil, headers: HTTPHeaders(), bodyCount: 0, reason: peerClosedInput ? .peerClosed : .connectionClosed,
               now: loop.clock.now())
    }

    private func queue(_ bytes: [UInt8]) {
        if output.isEmpty { output = bytes } else { output.append(contentsOf: bytes) }
    }

    /// Writes queued bytes until done or the socket is full.
    func flush(now: UInt64) {
        while outputSent < output.count {
            let sent = output.withUnsafeBytes { bytes in transmit(bytes.baseAddress! + outputSent, bytes.count - outputSent) }
            guard let sent else {
                if state != .closed { updateInterest() }
                return
            }
            outputSent += sent
        }
        output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
        outputSent = 0
        guard state == .writing else {
            updateInterest()
            return
        }
        if stallsAfterWrite {
            stallsAfterWrite = false
            state = .stalled
            updateInterest()
            return
        }
        if closeAfterResponse {
            loop.close(self)
            return
        }
        state = .reading
        idleSince = now
        // A pipelined request already begun is timed from now, when the server starts reading it.
        if requestStarted != nil { requestStarted = now }
        if loop.isDraining && !parser.hasPartialRequest {
            loop.close(self)
            return
        }
        processInput(now: now)
    }

    /// Registers the epoll events the current state needs.
    func updateInterest() {
        guard state != .closed else { return }
        var wanted: UInt32 = 0
        if (state == .reading || state == .stalled) && !peerClosedInput { wanted |= MH_EPOLLIN }
        if outputSent < output.count { wanted |= MH_EPOLLOUT }
        // What TLS waits for replaces the state's own events: asking for writability while
        // OpenSSL waits to read (or the reverse) would wake the loop on every turn for nothing.
        if tlsWants != 0 { wanted = tlsWants }
        if wanted != interest {
            interest = wanted
            loop.modify(self, events: wanted)
        }
    }

    /// Seconds from `since` to `now` on the monotonic clock. `since` can be later than `now`: a
    /// deferred response stamps the time it completes, after the loop read the clock for its
    /// sweep. That is no time at all (an unsigned wrap-around here once closed busy keep-alive
    /// connections as "idle for 584 years").
    static func seconds(from since: UInt64, to now: UInt64) -> Double {
        since >= now ? 0 : Double(now - since) / 1e9
    }

    /// Applies the timeouts: answers 408 and closes, or just closes, a connection past one.
    func checkTimeouts(now: UInt64) {
        let limits = listener.limits
        func elapsed(_ since: UInt64) -> Double { Self.seconds(from: since, to: now) }
        switch state {
        case .reading:
            let partial = parser.hasPartialRequest
            if let started = requestStarted {
                let limit = parser.isReadingHead ? limits.headerTimeout : limits.requestTimeout
                if elapsed(started) > limit {
                    // Nothing but empty lines: no request to answer, so close as an idle connection.
                    if partial { fail(.requestTimeout, reason: .timedOut, now: now) } else { loop.close(self) }
                } else if !partial && loop.isDraining {
                    loop.close(self)
                }
            } else if elapsed(idleSince) > limits.idleTimeout || loop.isDraining {
                loop.close(self)
            }
        case .writing, .stalled:
            if elapsed(responseQueued) > limits.writeTimeout { loop.close(self) }
        case .handling, .closed:
            break
        }
    }

    /// Grows this connection's body reservation to `count` bytes; false when the server's budget
    /// cannot cover it (the reservation is then unchanged).
    private func reserveBodyBudget(_ count: Int) -> Bool {
        guard count > reservedBodyBytes else { return true }
        guard loop.core.reserveBodyBytes(count - reservedBodyBytes) else { return false }
        reservedBodyBytes = count
        return true
    }

    /// Returns the whole reservation to the server's budget (a response was queued, or the
    /// connection closes). Safe to call more than once.
    func releaseBodyBudget() {
        loop.core.releaseBodyBytes(reservedBodyBytes)
        reservedBodyBytes = 0
    }
}
