import FoundationEssentials
import Synchronization

/// The mock's notion of "now", which tests and the control API can move: real time plus an
/// offset, or frozen at an instant. All expiry checks read it (house style rule 10).
public final class MockClock: Sendable {
    private struct State {
        var offset: Double = 0
        var frozen: Double?
    }

    private let state = Mutex(State())
    private let realTime: @Sendable () -> Double

    /// A clock following `realTime` (seconds since 1970; the system clock by default).
    public init(realTime: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.realTime = realTime
    }

    /// Now, in seconds since 1970 with fractions.
    public var now: Double {
        state.withLock { $0.frozen ?? (realTime() + $0.offset) }
    }

    /// Now, in whole seconds since 1970 (JWT `NumericDate`).
    public var seconds: Int64 { Int64(now.rounded(.down)) }

    /// Moves the clock forward (or back, when negative).
    public func advance(by seconds: Double) {
        state.withLock { state in
            if let frozen = state.frozen { state.frozen = frozen + seconds } else { state.offset += seconds }
        }
    }

    /// Sets now to `instant`; the clock keeps running from there unless frozen.
    public func set(to instant: Double) {
        state.withLock { state in
            if state.frozen != nil { state.frozen = instant } else { state.offset = instant - realTime() }
        }
    }

    /// Stops the clock at its current instant, or lets it run again.
    public func setFrozen(_ frozen: Bool) {
        state.withLock { state in
            if frozen {
                if state.frozen == nil { state.frozen = realTime() + state.offset }
            } else if let instant = state.frozen {
                state.frozen = nil
                state.offset = instant - realTime()
            }
        }
    }

    /// Whether the clock is frozen.
    public var isFrozen: Bool { state.withLock { $0.frozen != nil } }
}
