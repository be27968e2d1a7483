/// Everything that shapes a running `HTTPServer`; every field has a default.
public struct HTTPServerConfiguration: Sendable {
    /// Address to bind: an IPv4 or IPv6 literal, or `localhost`.
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 binds an ephemeral port, readable from `HTTPServer.port`.
    public var port: Int = 8080
    /// Event-loop threads; defaults to the number of active processors.
    public var eventLoopCount: Int = HTTPServerConfiguration.activeProcessors
    /// Listen backlog.
    public var backlog: Int32 = 1024
    /// Connections held at once; further ones are accepted and closed at once. The server may
    /// hold fewer: `HTTPServer.maxConnections` is this capped by the open-file limit.
    public var maxConnections: Int = 50_000
    /// Request-body bytes all connections together may buffer, from when a body's size is known
    /// (its Content-Length, or each chunk's size line) until its response is queued or the
    /// connection closes. A request that would pass it is answered 503 and its connection closed.
    /// The default, 64 MiB, is 64 bodies of `limits.maxBodyBytes` at once, far beyond what the
    /// forms a mock serves need, and keeps memory bounded whatever `maxConnections` is.
    public var maxBufferedBodyBytes: Int = 64 * 1024 * 1024
    /// Size, time and count limits on clients.
    public var limits = HTTPLimits()
    /// When set, the port serves HTTPS only: every connection starts with a TLS handshake, timed
    /// like a request head (a client that stalls mid-handshake is dropped as a slowloris is).
    public var tls: TLSServerContext?
    /// Seconds a graceful shutdown waits for in-flight requests before closing everything.
    public var shutdownGrace: Double = 10
    /// Sees every exchange, MiniHTTP's own answers and cut-off requests included. Nil (the
    /// default) costs one nil check per request: no exchange value is built, no address read.
    public var observer: (any HTTPExchangeObserver)?
    /// Where MiniHTTP reports, one line each, what it cannot answer for: a handler's unknown
    /// error, a response it refused to frame, a failed accept or epoll call. Standard error
    /// (`HTTPServerLog.write`) by default; the mock passes its own log writer.
    public var log: @Sendable (String) -> Void = HTTPServerLog.write
    /// What every timeout, timer and exchange time reads: the monotonic clock, or a test's own
    /// (`ServerClock`), moved by the test and applied by `HTTPServer.sweep()`.
    package var clock: ServerClock = .monotonic

    /// The defaults above.
    public init() {}

    /// Processors this process may run on.
    public static var activeProcessors: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

import Glibc
