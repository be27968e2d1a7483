import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A running HTTP/1.1 server: a listening socket and event-loop threads.
///
/// `start` binds and returns once connections are being accepted; `shutdown` stops accepting,
/// lets in-flight requests finish, and `waitUntilStopped` returns when all loops have ended.
public final class HTTPServer: Sendable {
    /// The configuration it was started with.
    public let configuration: HTTPServerConfiguration
    /// The bound host (numeric).
    public let host: String
    /// The bound port (the real one when 0 was configured).
    public let port: Int
    private let core: ServerCore
    private let loops: [EventLoop]
    private let stopped = DispatchGroup()
    private let shuttingDown = Atomic<Bool>(false)
    private let runningLoops: Atomic<Int>

    private init(core: ServerCore, loops: [EventLoop]) {
        self.core = core
        self.configuration = core.configuration
        self.host = core.listener.host
        self.port = core.listener.port
        self.loops = loops
        self.runningLoops = Atomic(loops.count)
    }

    /// Binds, starts the event loops and returns the running server.
    public static func start(configuration: HTTPServerConfiguration, routes: RouteTable) throws(SocketError) -> HTTPServer {
        raiseDescriptorLimit()
        let listener = try ListeningSocket(host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        let core = ServerCore(configuration: configuration, routes: routes, listener: listener)
        var loops: [EventLoop] = []
        do {
            for _ in 0..<max(1, configuration.eventLoopCount) { loops.append(try EventLoop(core: core)) }
        } catch {
            listener.close()
            throw error
        }
        let server = HTTPServer(core: core, loops: loops)
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

    /// The URL clients use, e.g. `http://127.0.0.1:8080` or `http://[::1]:8080`.
    public var url: String {
        host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }

    /// Connections open right now.
    public var openConnections: Int { core.openConnections }

    /// Begins a graceful stop; returns at once. Safe to call more than once.
    public func shutdown() {
        guard !shuttingDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for loop in loops { loop.beginDrain() }
        // Refuse new connections now rather than leaving them queued, unserved, until the last
        // in-flight request ends. The descriptor itself stays open until the loops are done.
        core.listener.stopListening()
    }

    /// The last loop to end closes the listener, before `waitUntilStopped` can return.
    private func loopEnded() {
        if runningLoops.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            core.listener.close()
            core.forgetLoops()
        }
    }

    /// Blocks the calling thread until every loop has ended. Not for use inside async code.
    public func waitUntilStopped() {
        stopped.wait()
    }

    /// Suspends until every loop has ended.
    public func stopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stopped.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// `shutdown()` then `waitUntilStopped()`.
    public func stop() {
        shutdown()
        waitUntilStopped()
    }

    /// Lifts the soft open-file limit to the hard one so thousands of clients fit.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
