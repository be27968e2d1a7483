import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A running HTTP/1.1 server, and optionally SMTP on a second port: listening sockets and
/// event-loop threads that serve both.
///
/// `start` binds and returns once connections are being accepted; `shutdown` stops accepting,
/// lets in-flight requests finish, and `stopped()` returns when all loops have ended. `await
/// stop()` does both from async code without holding a thread; the blocking `stop()` and
/// `waitUntilStopped()` are for synchronous callers (a command's main thread, a synchronous test).
public final class HTTPServer: Sendable {
    /// The configuration it was started with.
    public let configuration: HTTPServerConfiguration
    /// The bound host (numeric).
    public let host: String
    /// The bound port (the real one when 0 was configured).
    public let port: Int
    /// The bound SMTP port when the server carries SMTP (the real one when 0 was configured).
    public let smtpPort: Int?
    /// Connections this server holds at once: `configuration.maxConnections`, capped so that
    /// clients cannot take the descriptors the process needs for itself (see `connectionLimit`).
    public let maxConnections: Int
    private let core: ServerCore
    private let http: HTTPListener
    private let smtp: SMTPListener?
    private let loops: [EventLoop]
    private let stopped = DispatchGroup()
    private let shuttingDown = Atomic<Bool>(false)
    private let runningLoops: Atomic<Int>

    private init(core: ServerCore, http: HTTPListener, smtp: SMTPListener?, loops: [EventLoop]) {
        self.core = core
        self.configuration = core.configuration
        self.http = http
        self.smtp = smtp
        self.host = http.socket.host
        self.port = http.socket.port
        self.smtpPort = smtp?.socket.port
        self.maxConnections = core.maxConnections
        self.loops = loops
        self.runningLoops = Atomic(loops.count)
    }

    /// Binds, starts the event loops and returns the running server: HTTP from `routes` on the
    /// configuration's port and, with `smtp`, SMTP on that configuration's port, both on the same
    /// loops and under the same connection limit.
    public static func start(configuration: HTTPServerConfiguration, routes: RouteTable,
                             smtp smtpConfiguration: SMTPServerConfiguration? = nil) throws(SocketError) -> HTTPServer {
        // OpenSSL writes to the socket with write(2): a peer gone mid-write must be an error, not
        // a SIGPIPE that ends the process (plain connections send with MSG_NOSIGNAL).
        if configuration.tls != nil || smtpConfiguration?.tls != nil { signal(SIGPIPE, SIG_IGN) }
        let descriptorLimit = raiseDescriptorLimit()
        // Before any client can fill the descriptor table.
        _ = runtimeWarmUp
        let loopCount = max(1, configuration.eventLoopCount)
        let limit = connectionLimit(configured: configuration.maxConnections, descriptorLimit: descriptorLimit, eventLoops: loopCount)
        let http = HTTPListener(socket: try ListeningSocket(host: configuration.host, port: configuration.port, backlog: configuration.backlog),
                                configuration: configuration, routes: routes)
        var smtp: SMTPListener?
        if let smtpConfiguration {
            do {
                smtp = SMTPListener(socket: try ListeningSocket(host: smtpConfiguration.host, port: smtpConfiguration.port,
                                                                backlog: configuration.backlog),
                                    configuration: smtpConfiguration)
            } catch {
                http.socket.close()
                throw error
            }
        }
        return try start(configuration: configuration, http: http, others: smtp.map { [$0] } ?? [], connectionLimit: limit)
    }

    /// Starts the loops over a listener table of `http` and `others` (SMTP's, or a test's own
    /// protocol), holding at most `connectionLimit` connections of all of them together.
    static func start(configuration: HTTPServerConfiguration, http: HTTPListener, others: [any ServerListener],
                      connectionLimit limit: Int) throws(SocketError) -> HTTPServer {
        let listeners: [any ServerListener] = [http] + others
        let loopCount = max(1, configuration.eventLoopCount)
        let core = ServerCore(configuration: configuration, listeners: listeners, maxConnections: limit)
        var loops: [EventLoop] = []
        do {
            for index in 0..<loopCount { loops.append(try EventLoop(core: core, index: index, of: loopCount)) }
        } catch {
            for listener in listeners { listener.socket.close() }
            throw error
        }
        let server = HTTPServer(core: core, http: http, smtp: others.lazy.compactMap { $0 as? SMTPListener }.first, loops: loops)
        core.adopt(loops)
        for (index, loop) in loops.enumerated() {
            server.stopped.enter()
            LoopThread.start(name: "MiniHTTP-loop-\(index)") { [server] in
                loop.run()
                server.loopEnded()
                server.stopped.leave()
            }
        }
        return server
    }

    /// `https` when the server speaks TLS, `http` otherwise.
    public var scheme: String { configuration.tls == nil ? "http" : "https" }

    /// The URL clients use, e.g. `http://127.0.0.1:8080`, `https://[::1]:8443`.
    public var url: String {
        host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }

    /// Connections open right now.
    public var openConnections: Int { core.openConnections }

    /// How many times a connection's epoll registration changed since start (an `epoll_ctl`
    /// each): a keep-alive request answered at once changes none.
    public var interestChanges: Int { core.interestChangeCount }

    /// Request-body bytes reserved right now against `configuration.maxBufferedBodyBytes`.
    public var reservedBodyBytes: Int { core.reservedBodyBytes }

    /// Message bytes SMTP sessions hold now, against `SMTPServerConfiguration.maxBufferedMessageBytes`.
    public var reservedMessageBytes: Int { smtp?.reservedMessageBytes ?? 0 }

    /// Runs every loop's sweep now, with the time `configuration.clock` reads, and returns once
    /// each has: the due timers fire and the connections past a timeout are answered or closed.
    /// A test that moved its own clock calls it to see the timeouts apply (the loops also sweep by
    /// themselves, a few times a second of real time). Blocks the calling thread: not for a loop.
    @available(*, noasync, message: "blocks its thread")
    package func sweep() {
        let group = DispatchGroup()
        for loop in loops {
            group.enter()
            loop.sweepNow { group.leave() }
        }
        group.wait()
    }

    /// Makes every loop's next `epoll_wait` fail (its epoll descriptor's number then names
    /// /dev/null): the test that a loop whose wait fails logs it and ends, never spins.
    package func spoilEventLoopWaits() {
        for loop in loops { loop.spoilWait() }
    }

    /// Begins a graceful stop; returns at once. Safe to call more than once.
    public func shutdown() {
        guard !shuttingDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for loop in loops { loop.beginDrain() }
        // Refuse new connections now rather than leaving them queued, unserved, until the last
        // in-flight request ends. The descriptor itself stays open until the loops are done.
        for listener in core.listeners { listener.socket.stopListening() }
    }

    /// The last loop to end closes the listener, before `waitUntilStopped` can return.
    private func loopEnded() {
        if runningLoops.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            for listener in core.listeners { listener.socket.close() }
            core.forgetLoops()
        }
    }

    /// Blocks the calling thread until every loop has ended: for synchronous callers only (the
    /// compiler refuses it in async code, where `await stopped()` waits without a thread).
    @available(*, noasync, message: "blocks its thread: use `await stopped()` in async code")
    public func waitUntilStopped() {
        stopped.wait()
    }

    /// Suspends until every loop has ended; holds no thread (the loops' last one resumes it).
    public func stopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stopped.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// `shutdown()`, then suspends until every loop has ended.
    public func stop() async {
        shutdown()
        await stopped()
    }

    /// `shutdown()` then `waitUntilStopped()`, blocking the calling thread: for synchronous
    /// callers only (`await stop()` in async code).
    @available(*, noasync, message: "blocks its thread: use `await stop()` in async code")
    public func stop() {
        shutdown()
        stopped.wait()
    }

    /// Lifts the soft open-file limit to the hard one so thousands of clients fit; returns the
    /// soft limit now in force (`Int.max` when it cannot be read).
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is UInt64.max: clamp rather than trap.
        return Int(clamping: limit.rlim_cur)
    }

    /// The connections a server may hold when the process may open `descriptorLimit` files.
    ///
    /// Each connection is one descriptor, and when clients take the last one the process cannot
    /// open what it needs itself; libdispatch even traps when it cannot create its epoll, eventfd
    /// and timerfd. So a reserve stays free for: standard I/O, the listener, two
    /// descriptors per event loop (epoll and eventfd), the Swift runtime's and libdispatch's own,
    /// files the application reads and outbound connections it makes (a notification client).
    /// The reserve is an eighth of the limit, at least 32 (the few fixed ones with room to spare
    /// on a small limit such as 64) and at most 1,024 (more than a mock ever needs for itself),
    /// plus the loops' descriptors. A limit too small for the reserve still leaves 1 connection.
    static func connectionLimit(configured: Int, descriptorLimit: Int, eventLoops: Int) -> Int {
        let reserve = min(max(32, descriptorLimit / 8), 1024) + 2 * max(1, eventLoops)
        let available = descriptorLimit > reserve ? descriptorLimit - reserve : 1
        return min(configured, available)
    }

    /// Runs one throw-away task that sleeps for a millisecond, once per process, and waits for it.
    /// The concurrency runtime and libdispatch create their worker threads and their epoll,
    /// eventfd and timerfd descriptors lazily, on first use: left to the first deferred request,
    /// that can be a moment when clients hold every descriptor, and libdispatch then traps
    ///. `start` is synchronous, so it may block here; the wait is bounded so that a
    /// caller on a saturated cooperative pool is delayed, never deadlocked.
    private static let runtimeWarmUp: Void = {
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await Task.sleep(nanoseconds: 1_000_000)
            done.signal()
        }
        _ = done.wait(timeout: .now() + .seconds(5))
    }()
}
