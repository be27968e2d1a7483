import Foundation
import MiniHTTP
import Synchronization

/// An `HTTPExchangeObserver` that keeps every exchange it sees, for tests to assert on.
public final class HTTPExchangeRecorder: HTTPExchangeObserver {
    private let recorded = Mutex<[HTTPExchange]>([])

    /// An empty recorder.
    public init() {}

    /// Keeps `exchange`.
    public func observe(_ exchange: consuming HTTPExchange) {
        let kept = exchange
        recorded.withLock { $0.append(kept) }
    }

    /// The exchanges seen so far, in the order they were reported.
    public var exchanges: [HTTPExchange] { recorded.withLock { $0 } }

    /// Polls every 10 ms until `count` exchanges were seen or `seconds` passed; returns what was
    /// seen then. A bound for tests, never a timing assertion.
    public func waitForExchanges(_ count: Int, seconds: Double = 5) -> [HTTPExchange] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let seen = exchanges
            if seen.count >= count { return seen }
            usleep(10_000)
        }
        return exchanges
    }
}
