/// The clock a server's timeouts, timers and exchange times read, in nanoseconds that only go
/// forward. The default is the system's monotonic clock; a test passes one it moves itself and
/// then runs the loops' sweep (`HTTPServer.sweep()`), so a timeout is tested by moving time, not
/// by waiting for it (a test that waits for 0.3 s to pass fails on a loaded machine).
package struct ServerClock: Sendable {
    private let read: @Sendable () -> UInt64

    /// A clock that reads `now`; it must never go back.
    package init(_ now: @escaping @Sendable () -> UInt64) {
        read = now
    }

    /// The system's monotonic clock (`CLOCK_MONOTONIC`).
    package static let monotonic = ServerClock { Syscall.monotonicNanoseconds() }

    /// Nanoseconds now.
    package func now() -> UInt64 { read() }
}
