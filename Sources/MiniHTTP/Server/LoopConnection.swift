/// What an event loop asks of a client's connection, whatever protocol it speaks: the loop holds
/// every connection in one map, hands each its epoll events, sweeps its timeouts, fires its timers,
/// drains it at shutdown and closes it, and knows nothing of HTTP or SMTP. A connection lives on
/// its loop's thread only.
protocol LoopConnection: AnyObject {
    /// The connection's epoll token, unique on its loop.
    var id: UInt64 { get }
    /// The socket; the loop closes it once `willClose()` has run.
    var fd: Int32 { get }
    /// Whether the loop has closed it (a closed connection ignores what still reaches it).
    var isClosed: Bool { get }
    /// The connection is in the loop's map and registered with epoll: a protocol that speaks
    /// first (SMTP's greeting) speaks now.
    func start(now: UInt64)
    /// Epoll reported `flags` for the socket.
    func event(_ flags: UInt32, scratch: UnsafeMutableRawBufferPointer, now: UInt64)
    /// A sweep: answers or closes a connection past one of its timeouts.
    func checkTimeouts(now: UInt64)
    /// A timer it asked for (`EventLoop.schedule`) is due.
    func timerFired(now: UInt64)
    /// The server stops: the connection ends what it can end now, and says so to its client
    /// where its protocol has a way.
    func drain(now: UInt64)
    /// Marks the connection closed and gives back what its protocol holds (budgets, sessions,
    /// TLS); the loop then closes the descriptor and uncounts the connection.
    func willClose()
}
