/// One port the server listens on and the protocol its clients speak: an entry of the server's
/// listener table, which makes its own connections. Every loop watches every listener (with
/// `EPOLLEXCLUSIVE`, so the kernel wakes one loop per client); the loop accepts, counts the
/// client against the server's connection limit, asks the listener to admit it, and hands it to
/// a loop in turn, where the listener makes its connection. A new protocol is a new entry: the
/// loop does not change.
protocol ServerListener: AnyObject, Sendable {
    /// The bound socket.
    var socket: ListeningSocket { get }
    /// Whether the loop asks the kernel for each client's address as it accepts.
    var wantsPeer: Bool { get }
    /// Seconds of the shortest timeout its connections keep: the loops sweep four times within it.
    var shortestTimeout: Double { get }
    /// The protocol's own admission, after the server's connection limit: false refuses the
    /// client (having told it why, where the protocol has a way), and the loop closes it.
    func admit(_ fd: Int32) -> Bool
    /// Gives back what `admit` took, for an admitted client that never became a connection.
    func abandon()
    /// The connection for an admitted client watched under `id` on `loop`; nil refuses it (the
    /// loop closes it and calls `abandon`).
    func connection(fd: Int32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop, now: UInt64) -> (any LoopConnection)?
}

/// The HTTP port: every client is a `Connection` answered from the route table, over TLS when the
/// configuration has a context.
final class HTTPListener: ServerListener {
    let socket: ListeningSocket
    let routes: RouteTable
    /// The configuration's exchange observer; nil when none is installed.
    let observer: (any HTTPExchangeObserver)?
    let limits: HTTPLimits
    private let tls: TLSServerContext?

    init(socket: ListeningSocket, configuration: HTTPServerConfiguration, routes: RouteTable) {
        self.socket = socket
        self.routes = routes
        observer = configuration.observer
        limits = configuration.limits
        tls = configuration.tls
    }

    /// The client's address is only asked of the kernel for an observer.
    var wantsPeer: Bool { observer != nil }

    var shortestTimeout: Double { min(limits.headerTimeout, limits.requestTimeout, limits.idleTimeout, limits.writeTimeout) }

    func admit(_ fd: Int32) -> Bool { true }

    func abandon() {}

    func connection(fd: Int32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop, now: UInt64) -> (any LoopConnection)? {
        var session: TLSServerSession?
        if let tls {
            guard let started = TLSServerSession(context: tls, fd: fd) else { return nil }
            session = started
        }
        return Connection(id: id, fd: fd, loop: loop, listener: self, tls: session, peer: peer, now: now)
    }
}
