import CMiniHTTP
import FoundationEssentials
import Glibc
import Synchronization

/// One thread running `epoll_wait` over its share of the connections.
///
/// Everything but `execute(_:)` and `beginDrain()` runs on the loop's own thread, so connection
/// state needs no locks. Accepting is shared: every loop watches the listening socket with
/// `EPOLLEXCLUSIVE`, so the kernel wakes one loop per incoming connection.
final class EventLoop: @unchecked Sendable {
    private static let listenerToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1
    private static let smtpListenerToken: UInt64 = 2

    let routes: RouteTable
    /// The configuration's exchange observer; nil when none is installed.
    let observer: (any HTTPExchangeObserver)?
    /// Where the loop reports what it cannot answer for (`HTTPServerConfiguration.log`).
    let log: @Sendable (String) -> Void
    /// The state all loops of the server share (limits, body budget, connection count).
    let core: ServerCore
    /// What timeouts, timers and exchange times read (`HTTPServerConfiguration.clock`). The sweep's
    /// cadence and the shutdown grace are real time: a stopped clock never holds a stop up.
    let clock: ServerClock
    /// The next `HTTPExchange.id` this loop gives, and the step to the one after: loop `i` of
    /// `n` numbers its exchanges i + 1, i + 1 + n, … (unique per server with no memory the loops
    /// share, so two loops do not bounce a cache line at every request).
    private var nextExchangeID: UInt64
    private let exchangeIDStep: UInt64
    private let epollFD: Int32
    private let wakeFD: Int32
    /// Jobs from other threads; nil once the loop has ended and closed its descriptors.
    private let jobs = Mutex<[@Sendable (EventLoop) -> Void]?>([])
    /// Whether `wakeFD` is still open; held while writing to it.
    private let wakeLock = Mutex(true)
    private var connections: [UInt64: Connection] = [:]
    /// SMTP clients, when the server carries SMTP too (`HTTPServerConfiguration.smtp`).
    private var smtpConnections: [UInt64: SMTPConnection] = [:]
    private var nextID: UInt64 = 16
    private var listening = false
    private var smtpListening = false
    private var listenerPausedUntil: UInt64?
    private(set) var isDraining = false
    private var drainDeadline: UInt64 = 0
    private var pendingTasks = 0
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// Connections waiting for a delayed response, by when (monotonic ns), earliest first.
    private var timers: [(due: UInt64, connection: UInt64)] = []

    init(core: ServerCore, index: Int, of count: Int) throws(SocketError) {
        self.core = core
        clock = core.configuration.clock
        nextExchangeID = UInt64(max(0, index)) + 1
        exchangeIDStep = UInt64(max(1, count))
        self.routes = core.routes
        self.observer = core.configuration.observer
        log = core.configuration.log
        epollFD = try Syscall.call("epoll_create1") { mh_epoll_create() }
        do {
            wakeFD = try Syscall.call("eventfd") { mh_eventfd() }
        } catch {
            Syscall.close(epollFD)
            throw error
        }
        try Syscall.control(epollFD, EPOLL_CTL_ADD, wakeFD, MH_EPOLLIN, Self.wakeToken)
        try addListener()
    }

    deinit {
        scratch.deallocate()
        releaseDescriptors()
    }

    /// A new exchange id (on the loop's thread).
    func takeExchangeID() -> UInt64 {
        defer { nextExchangeID &+= exchangeIDStep }
        return nextExchangeID
    }

    // MARK: - Cross-thread entry points

    /// Runs `job` on the loop's thread soon; false (and dropped) once the loop has ended.
    @discardableResult
    func execute(_ job: @escaping @Sendable (EventLoop) -> Void) -> Bool {
        let (accepted, startsBatch) = jobs.withLock { jobs in
            guard jobs != nil else { return (false, false) }
            jobs!.append(job)
            return (true, jobs!.count == 1)
        }
        // Only the first job of a batch wakes the loop: the loop takes jobs only after a wakeup,
        // and then takes the whole batch. The write happens outside the job lock, so the woken
        // loop does not spin on that lock while this thread is still in the system call; the
        // wake lock (which the loop takes only to close the eventfd) keeps the descriptor from
        // being closed, and its number reused, under the write.
        guard startsBatch else { return accepted }
        wakeLock.withLock { open in
            guard open else { return }
            do { try Syscall.signal(wakeFD) } catch { log("\(error): a loop may not wake for its jobs") }
        }
        return accepted
    }

    /// Makes the loop's next `epoll_wait` fail, for the test of what the loop does then.
    func spoilWait() {
        execute { loop in Syscall.replaceWithNull(loop.epollFD) }
    }

    /// Stops accepting, closes idle connections and lets in-flight requests finish.
    func beginDrain() {
        execute { loop in loop.drain() }
    }

    // MARK: - Loop

    /// Runs until drained; returns on the loop's thread.
    func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        let limits = core.configuration.limits
        let tick = Self.tickMilliseconds(limits)
        var nextSweep = Syscall.monotonicNanoseconds() + UInt64(tick) * 1_000_000
        while true {
            let count: Int
            do {
                count = try Syscall.wait(epollFD, events, Int32(capacity), timeout(tick))
            } catch {
                // A descriptor or argument the loop got wrong (EBADF, EINVAL): waiting again would
                // fail again at once, a silent spin. The loop ends, closing its connections.
                log("\(error): an event loop stops")
                break
            }
            let now = clock.now()
            let realNow = Syscall.monotonicNanoseconds()
            var woken = false
            if count > 0 {
                for index in 0..<count {
                    let flags = mh_event_flags(events + index)
                    let token = mh_event_data(events + index)
                    switch token {
                    case Self.listenerToken: acceptConnections(now: now)
                    case Self.smtpListenerToken: acceptSMTPConnections(now: now)
                    case Self.wakeToken:
                        drainWakeups()
                        woken = true
                    default: handle(token, flags: flags, now: now)
                    }
                }
            }
            // Jobs only arrive with a wakeup (see `execute`), so a busy loop does not contend
            // for the job lock with the threads finishing deferred responses on every turn.
            if woken { runJobs() }
            if let first = timers.first, first.due <= now { fireTimers(now: now) }
            if realNow >= nextSweep {
                sweep(now: now, limits: limits)
                nextSweep = realNow + UInt64(tick) * 1_000_000
            }
            if isDraining && ((connections.isEmpty && smtpConnections.isEmpty && pendingTasks == 0) || realNow >= drainDeadline) { break }
        }
        for connection in Array(connections.values) { close(connection) }
        for connection in Array(smtpConnections.values) { close(connection) }
        // Jobs queued until the very end still run: a connection handed over by another loop
        // is closed and uncounted by `register`, since this loop is draining.
        for job in releaseDescriptors() { job(self) }
    }

    /// Closes the eventfd and epoll descriptors exactly once, when the loop ends (or, if it never
    /// ran, when it is freed), so a stopped server holds no descriptors however long it is kept.
    /// Returns the jobs still queued, which no one else will run.
    @discardableResult
    private func releaseDescriptors() -> [@Sendable (EventLoop) -> Void] {
        let leftover = jobs.withLock { jobs in
            defer { jobs = nil }
            return jobs
        }
        guard let leftover else { return [] }
        wakeLock.withLock { open in
            open = false
            Syscall.close(wakeFD)
        }
        Syscall.close(epollFD)
        return leftover
    }

    private static func tickMilliseconds(_ limits: HTTPLimits) -> Int32 {
        let shortest = min(limits.headerTimeout, limits.requestTimeout, limits.idleTimeout, limits.writeTimeout)
        return Int32(max(5, min(250, shortest * 1000 / 4)))
    }

    private func handle(_ token: UInt64, flags: UInt32, now: UInt64) {
        guard let connection = connections[token] else {
            smtpConnections[token]?.event(flags, scratch: scratch, now: now)
            return
        }
        if flags & MH_EPOLLERR != 0 {
            close(connection)
            return
        }
        if flags & MH_EPOLLOUT != 0 {
            connection.writable(into: scratch, now: now)
        }
        guard connection.state != .closed else { return }
        if flags & MH_EPOLLIN != 0 && connection.acceptsInput {
            connection.readable(into: scratch, now: now)
        } else if flags & MH_EPOLLHUP != 0 {
            // Both directions are gone: nothing can be delivered.
            close(connection)
        }
    }

    private func acceptConnections(now: UInt64) {
        for _ in 0..<128 {
            let fd: Int32
            // The client's address is only asked of the kernel for an observer.
            var address = sockaddr_storage()
            do {
                if observer == nil {
                    fd = try Syscall.accept(core.listener.fd)
                } else {
                    fd = try withUnsafeMutablePointer(to: &address) { pointer throws(SocketError) in
                        try Syscall.accept(core.listener.fd, peer: pointer)
                    }
                }
            } catch {
                if goesOn(after: error, removing: removeHTTPListener, now: now) { continue }
                return
            }
            guard admit(fd) else { continue }
            let peer = observer == nil ? nil : HTTPPeerAddress(address)
            place(now: now) { loop, now in loop.register(fd, peer: peer, now: now) }
        }
    }

    /// After a failed accept: whether to try the next one in this burst. A listener shut down
    /// by `HTTPServer.shutdown()` (EINVAL) is removed, and this loop drains next; out of
    /// descriptors, the listeners pause for a moment instead of spinning.
    private func goesOn(after error: SocketError, removing listener: () -> Void, now: UInt64) -> Bool {
        if error.code == EINVAL {
            listener()
            return false
        }
        if error.code == EMFILE || error.code == ENFILE || error.code == ENOBUFS || error.code == ENOMEM {
            pauseListener(now: now)
        } else if error.code != ECONNABORTED && !error.isWouldBlock {
            log("\(error)")
        }
        return error.code == ECONNABORTED
    }

    /// Counts an accepted socket against the server's limit and sets it up; false (and the
    /// socket closed) when draining or full.
    private func admit(_ fd: Int32) -> Bool {
        guard isDraining == false, core.reserveConnection() else {
            Syscall.close(fd)
            return false
        }
        try? Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return true
    }

    /// Serves an admitted connection on the loop whose turn it is (this one, or another by a job).
    private func place(now: UInt64, _ register: @escaping @Sendable (EventLoop, UInt64) -> Void) {
        if let target = core.loopForNewConnection(), target !== self,
           target.execute({ loop in register(loop, loop.clock.now()) }) { return }
        register(self, now)
    }

    /// Adds an accepted (and counted) socket to this loop's epoll under a new id; nil (the
    /// socket closed and uncounted) when the loop drains or epoll refuses it.
    private func watch(_ fd: Int32) -> UInt64? {
        guard !isDraining else {
            Syscall.close(fd)
            core.releaseConnection()
            return nil
        }
        let id = nextID
        nextID += 1
        do {
            try Syscall.control(epollFD, EPOLL_CTL_ADD, fd, MH_EPOLLIN, id)
        } catch {
            Syscall.close(fd)
            core.releaseConnection()
            return nil
        }
        return id
    }

    /// Serves an accepted (and counted) connection on this loop.
    private func register(_ fd: Int32, peer: HTTPPeerAddress?, now: UInt64) {
        guard let id = watch(fd) else { return }
        var tls: TLSServerSession?
        if let context = core.configuration.tls {
            guard let session = TLSServerSession(context: context, fd: fd) else {
                // Closing the descriptor drops its registration whatever this answers.
                _ = try? Syscall.control(epollFD, EPOLL_CTL_DEL, fd, 0, id)
                Syscall.close(fd)
                core.releaseConnection()
                return
            }
            tls = session
        }
        connections[id] = Connection(id: id, fd: fd, loop: self, limits: core.configuration.limits, tls: tls, peer: peer, now: now)
    }

    private func addListener() throws(SocketError) {
        if !listening {
            try Syscall.control(epollFD, EPOLL_CTL_ADD, core.listener.fd, MH_EPOLLIN | MH_EPOLLEXCLUSIVE, Self.listenerToken)
            listening = true
        }
        if let smtp = core.smtpListener, !smtpListening {
            try Syscall.control(epollFD, EPOLL_CTL_ADD, smtp.fd, MH_EPOLLIN | MH_EPOLLEXCLUSIVE, Self.smtpListenerToken)
            smtpListening = true
        }
    }

    private func removeListener() {
        removeHTTPListener()
        removeSMTPListener()
    }

    private func removeHTTPListener() {
        guard listening else { return }
        removeRegistration(core.listener.fd, Self.listenerToken)
        listening = false
    }

    private func removeSMTPListener() {
        guard smtpListening, let smtp = core.smtpListener else { return }
        removeRegistration(smtp.fd, Self.smtpListenerToken)
        smtpListening = false
    }

    /// Out of descriptors: stop accepting for a moment instead of spinning on the listeners.
    private func pauseListener(now: UInt64) {
        removeListener()
        listenerPausedUntil = now + 100_000_000
    }

    // MARK: - SMTP

    /// Accepts SMTP clients (a bounded burst) and serves them on the loops in turn.
    private func acceptSMTPConnections(now: UInt64) {
        guard let listener = core.smtpListener, let smtp = core.configuration.smtp else { return }
        for _ in 0..<128 {
            let fd: Int32
            do {
                fd = try Syscall.accept(listener.fd)
            } catch {
                if goesOn(after: error, removing: removeSMTPListener, now: now) { continue }
                return
            }
            // The same limit as HTTP clients: a flood of either cannot take the process's descriptors.
            guard admit(fd) else { continue }
            // And SMTP's own: mail clients cannot hold every connection HTTP needs.
            guard core.reserveSMTPSession() else {
                let busy = Array("421 4.7.0 \(smtp.hostname) Error: too many connections\r\n".utf8)
                var wants: UInt32 = 0
                _ = busy.withUnsafeBytes { SocketIO.write(fd, nil, $0.baseAddress!, $0.count, wants: &wants) }
                Syscall.close(fd)
                core.releaseConnection()
                continue
            }
            place(now: now) { loop, now in loop.registerSMTP(fd, configuration: smtp, now: now) }
        }
    }

    /// Serves an accepted (and counted) SMTP client on this loop.
    private func registerSMTP(_ fd: Int32, configuration: SMTPServerConfiguration, now: UInt64) {
        guard let id = watch(fd) else {
            core.releaseSMTPSession()
            return
        }
        let connection = SMTPConnection(id: id, fd: fd, loop: self, configuration: configuration, now: now)
        smtpConnections[id] = connection
        connection.start(now: now)
    }

    /// Changes the epoll events for an SMTP connection.
    func modify(fd: Int32, id: UInt64, events: UInt32) {
        change(fd, id, events)
    }

    /// Changes a registration; a failure (the descriptor is not registered, or not open) is the
    /// loop's own mistake, logged: the connection then hears nothing more and its timeout ends it.
    private func change(_ fd: Int32, _ id: UInt64, _ events: UInt32) {
        do { try Syscall.control(epollFD, EPOLL_CTL_MOD, fd, events, id) } catch { log("\(error) (connection \(id))") }
    }

    /// Removes a listener's registration. A listener the server shut down may be gone from the
    /// epoll set already (ENOENT, EBADF): nothing to remove. Anything else is logged.
    private func removeRegistration(_ fd: Int32, _ token: UInt64) {
        do { try Syscall.control(epollFD, EPOLL_CTL_DEL, fd, 0, token) } catch where error.code != ENOENT && error.code != EBADF { log("\(error)") } catch {}
    }

    /// Closes an SMTP connection exactly once and forgets it.
    func close(_ connection: SMTPConnection) {
        guard !connection.isClosed else { return }
        connection.markClosed()
        smtpConnections[connection.id] = nil
        Syscall.close(connection.fd)
        core.releaseConnection()
        core.releaseSMTPSession()
    }

    // MARK: - Timers

    /// Wakes `connection` (by id) at `due` (monotonic ns) through `Connection.timerFired`.
    func schedule(_ connection: UInt64, at due: UInt64) {
        let index = timers.firstIndex { $0.due > due } ?? timers.count
        timers.insert((due, connection), at: index)
    }

    /// How long `epoll_wait` may sleep: the sweep tick, or less when a timer is due sooner.
    private func timeout(_ tick: Int32) -> Int32 {
        guard let first = timers.first else { return tick }
        let now = clock.now()
        guard first.due > now else { return 0 }
        // Rounded up: waking a little early would only spin until the timer is due.
        return Int32(min(UInt64(tick), (first.due - now + 999_999) / 1_000_000))
    }

    private func fireTimers(now: UInt64) {
        var due: [UInt64] = []
        while let first = timers.first, first.due <= now {
            due.append(first.connection)
            timers.removeFirst()
        }
        // A connection closed meanwhile is gone from the table: its timer does nothing.
        for id in due { connections[id]?.timerFired(now: now) }
    }

    private func drainWakeups() {
        do { try Syscall.drain(wakeFD) } catch { log("\(error)") }
    }

    private func runJobs() {
        let pending = jobs.withLock { jobs in
            let taken = jobs ?? []
            if jobs != nil { jobs = [] }
            return taken
        }
        for job in pending { job(self) }
    }

    /// Fires the timers due and applies the timeouts now, on the loop's thread, then calls `done`
    /// (`HTTPServer.sweep()`: a test that moved its clock sees the outcome before it goes on).
    func sweepNow(done: @escaping @Sendable () -> Void) {
        let accepted = execute { loop in
            let now = loop.clock.now()
            if let first = loop.timers.first, first.due <= now { loop.fireTimers(now: now) }
            loop.sweep(now: now, limits: loop.core.configuration.limits)
            done()
        }
        if !accepted { done() }
    }

    private func sweep(now: UInt64, limits: HTTPLimits) {
        if let until = listenerPausedUntil, now >= until, !isDraining {
            listenerPausedUntil = nil
            try? addListener()
        }
        for connection in Array(connections.values) where connection.state != .closed {
            connection.checkTimeouts(now: now, limits: limits)
        }
        for connection in Array(smtpConnections.values) where !connection.isClosed {
            connection.checkTimeouts(now: now)
        }
    }

    private func drain() {
        guard !isDraining else { return }
        isDraining = true
        // Clamped: a negative, NaN or enormous grace must not trap in the conversion.
        let grace = min(max(core.configuration.shutdownGrace, 0), 1e9)
        drainDeadline = Syscall.monotonicNanoseconds() + UInt64(grace.isNaN ? 0 : grace * 1e9)
        removeListener()
        listenerPausedUntil = nil
        for connection in Array(connections.values) where connection.state == .reading && !connection.parser.hasPartialRequest {
            close(connection)
        }
        let now = clock.now()
        for connection in Array(smtpConnections.values) { connection.drain(now: now) }
    }

    // MARK: - Connection support

    /// The live connection with this id, if it has not closed meanwhile.
    func connection(_ id: UInt64) -> Connection? { connections[id] }

    /// Counts deferred handlers still running, so draining waits for them.
    func inFlight(_ delta: Int) { pendingTasks += delta }

    /// Changes the epoll events for a connection.
    func modify(_ connection: Connection, events: UInt32) {
        change(connection.fd, connection.id, events)
        core.countInterestChange()
    }

    /// Closes a connection exactly once, forgets it and returns its body reservation.
    func close(_ connection: Connection) {
        guard connection.state != .closed else { return }
        if observer != nil { connection.reportCutOff() }
        connection.state = .closed
        connection.releaseBodyBudget()
        connections[connection.id] = nil
        connection.tls?.shutdown()
        Syscall.close(connection.fd)
        core.releaseConnection()
    }
}
