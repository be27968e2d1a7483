import MiniHTTP
import Synchronization

/// A server clock only the test moves: a timeout is tested by moving it past the limit and
/// sweeping (`HTTPServer.sweep()`), never by waiting, so a loaded machine cannot trip or miss it.
package final class ManualServerClock: Sendable {
    /// Starts at one second.
    package init() {}

    private let nanoseconds = Atomic<UInt64>(1_000_000_000)

    /// The clock to put in `HTTPServerConfiguration.clock`.
    package var clock: ServerClock { ServerClock { [self] in nanoseconds.load(ordering: .acquiring) } }

    /// Moves the clock on by `seconds`, then runs `server`'s sweep so that every timeout now past
    /// has been applied when this returns.
    package func pass(_ seconds: Double, on server: HTTPServer) {
        nanoseconds.add(UInt64(seconds * 1e9), ordering: .releasing)
        server.sweep()
    }
}

extension HTTPServerConfiguration {
    /// `testing(timeouts:)` on `clock`: a header, idle and write timeout of `seconds` (a request
    /// timeout of twice that) that pass only when the test moves the clock.
    package static func testing(timeouts seconds: Double = 30, clock: ManualServerClock) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration.testing(timeouts: seconds)
        configuration.clock = clock.clock
        return configuration
    }
}
