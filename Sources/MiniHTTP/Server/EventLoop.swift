import CMiniHTTP
import FoundationEssentials
import Glibc
import Synchronization

/// One thread running `epoll_wait` over its share of the connections, of whatever protocol.
///
/// Everything but `execute(_:)` and `beginDrain()` runs on the loop's own thread, so connection
/// state needs no locks. Accepting is shared: every loop watches every listening socket of the
/// server's listener table with `EPOLLEXCLUSIVE`, so the kernel wakes one loop per incoming
/// connection. What a connection does with its events is its own (`LoopConnection`): the loop
/// holds them in one map, sweeps their timeouts, fires their timers, drains and closes them.
final class EventLoop: @unchecked Sendable {
    private static let wakeToken: UInt64 = 0

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
    private var connections: [UInt64: any LoopConnection] = [:]
    /// Tokens above the listeners' (`ServerCore.listeners`) name connections.
    private var nextID: UInt64
    /// Whether listener `i` is registered with this loop's epoll now.
    private var listening: [Bool]
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
        log = core.configuration.log
        nextID = UInt64(core.listeners.count) + 1
        listening = Array(repeating: false, count: core.listeners.count)
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
        let tick = core.sweepMilliseconds
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
                    if token == Self.wakeToken {
                        drainWakeups()
                        woken = true
                    } else if token <= UInt64(listening.count) {
                        accept(Int(token) - 1, now: now)
                    } else {
                        connections[token]?.event(flags, scratch: scratch, now: now)
                    }
                }
            }
            // Jobs only arrive with a wakeup (see `execute`), so a busy loop does not contend
            // for the job lock with the threads finishing deferred responses on every turn.
            if woken { runJobs() }
            if let first = timers.first, first.due <= now { fireTimers(now: now) }
            if realNow >= nextSweep {
                sweep(now: now)
                nextSweep = realNow + UInt64(tick) * 1_000_000
            }
            if isDraining && ((connections.isEmpty && pendingTasks == 0) || realNow >= drainDeadline) { break }
        }
        for connection in Array(connections.values) { close(connection) }
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

    /// Accepts a bounded burst of clients of listener `index` and serves them on the loops in turn.
    private func accept(_ index: Int, now: UInt64) {
        let listener = core.listeners[index]
        for _ in 0..<128 {
            let fd: Int32
            var address = sockaddr_storage()
            do {
                if listener.wantsPeer {
                    fd = try withUnsafeMutablePointer(to: &address) { pointer throws(SocketError) in
                        try Syscall.accept(listener.socket.fd, peer: pointer)
                    }
                } else {
                    fd = try Syscall.accept(listener.socket.fd)
                }
            } catch {
                if goesOn(after: error, removing: index, now: now) { continue }
                return
            }
            // One limit for every protocol: a flood of any cannot take the process's descriptors.
            guard admit(fd) else { continue }
            guard listener.admit(fd) else {
                Syscall.close(fd)
                core.releaseConnection()
                continue
            }
            let peer = listener.wantsPeer ? HTTPPeerAddress(address) : nil
            place(now: now) { loop, now in loop.register(fd, from: index, peer: peer, now: now) }
        }
    }

    /// After a failed accept: whether to try the next one in this burst. A listener shut down
    /// by `HTTPServer.shutdown()` (EINVAL) is removed, and this loop drains next; out of
    /// descriptors, the listeners pause for a moment instead of spinning.
    private func goesOn(after error: SocketError, removing listener: Int, now: UInt64) -> Bool {
        if error.code == EINVAL {
            removeListener(listener)
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

    /// Serves an accepted (and counted, and admitted) client of listener `index` on this loop,
    /// under a new id. When the loop drains, epoll refuses the socket or the listener makes no
    /// connection of it, the socket is closed, uncounted and given back to the listener.
    private func register(_ fd: Int32, from index: Int, peer: HTTPPeerAddress?, now: UInt64) {
        let listener = core.listeners[index]
        func refuse() {
            Syscall.close(fd)
            core.releaseConnection()
            listener.abandon()
        }
        guard !isDraining else { return refuse() }
        let id = nextID
        nextID += 1
        do {
            try Syscall.control(epollFD, EPOLL_CTL_ADD, fd, MH_EPOLLIN, id)
        } catch {
            return refuse()
        }
        guard let connection = listener.connection(fd: fd, id: id, peer: peer, loop: self, now: now) else {
            // Closing the descriptor drops its registration whatever this answers.
            _ = try? Syscall.control(epollFD, EPOLL_CTL_DEL, fd, 0, id)
            return refuse()
        }
        connections[id] = connection
        connection.start(now: now)
    }

    private func addListener() throws(SocketError) {
        for (index, listener) in core.listeners.enumerated() where !listening[index] {
            try Syscall.control(epollFD, EPOLL_CTL_ADD, listener.socket.fd, MH_EPOLLIN | MH_EPOLLEXCLUSIVE, UInt64(index) + 1)
            listening[index] = true
        }
    }

    private func removeListeners() {
        for index in listening.indices { removeListener(index) }
    }

    private func removeListener(_ index: Int) {
        guard listening[index] else { return }
        removeRegistration(core.listeners[index].socket.fd, UInt64(index) + 1)
        listening[index] = false
    }

    /// Out of descriptors: stop accepting for a moment instead of spinning on the listeners.
    private func pauseListener(now: UInt64) {
        removeListeners()
        listenerPausedUntil = now + 100_000_000
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

    // MARK: - Timers

    /// Wakes `connection` (by id) at `due` (monotonic ns) through `LoopConnection.timerFired`.
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
            loop.sweep(now: now)
            done()
        }
        if !accepted { done() }
    }

    private func sweep(now: UInt64) {
        if let until = listenerPausedUntil, now >= until, !isDraining {
            listenerPausedUntil = nil
            try? addListener()
        }
        for connection in Array(connections.values) where !connection.isClosed {
            connection.checkTimeouts(now: now)
        }
    }

    private func drain() {
        guard !isDraining else { return }
        isDraining = true
        // Clamped: a negative, NaN or enormous grace must not trap in the conversion.
        let grace = min(max(core.configuration.shutdownGrace, 0), 1e9)
        drainDeadline = Syscall.monotonicNanoseconds() + UInt64(grace.isNaN ? 0 : grace * 1e9)
        removeListeners()
        listenerPausedUntil = nil
        let now = clock.now()
        for connection in Array(connections.values) where !connection.isClosed { connection.drain(now: now) }
    }

    // MARK: - Connection support

    /// The live connection with this id, if it has not closed meanwhile.
    func connection(_ id: UInt64) -> (any LoopConnection)? { connections[id] }

    /// Counts deferred handlers still running, so draining waits for them.
    func inFlight(_ delta: Int) { pendingTasks += delta }

    /// Changes the epoll events for a connection.
    func modify(_ connection: some LoopConnection, events: UInt32) {
        change(connection.fd, connection.id, events)
        core.countInterestChange()
    }

    /// Closes a connection exactly once, forgets it and uncounts it.
    func close(_ connection: some LoopConnection) {
        guard !connection.isClosed else { return }
        connection.willClose()
        connections[connection.id] = nil
        Syscall.close(connection.fd)
        core.releaseConnection()
    }
}
