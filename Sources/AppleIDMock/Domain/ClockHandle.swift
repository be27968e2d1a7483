/// The mock clock of a domain, as tests and in-process users move it. Each call is one
/// operation on the state owner.
public struct ClockHandle: Sendable {
    let state: MockState

    /// Now, in whole seconds since 1970.
    public var seconds: Int64 { state.now }
    /// Now, with fractions.
    public var now: Double { state.preciseNow }
    /// Whether the clock stands still.
    public var isFrozen: Bool { state.clock.isFrozen }

    /// Moves the clock by `seconds` (back when negative).
    public func advance(by seconds: Double) throws(MockClock.OutOfRange) { try state.moveClock(.advance(seconds)) }
    /// Sets now to `instant` (seconds since 1970).
    public func set(to instant: Double) throws(MockClock.OutOfRange) { try state.moveClock(.set(instant)) }
    /// Freezes the clock or lets it run.
    public func setFrozen(_ frozen: Bool) { _ = try? state.moveClock(.freeze(frozen)) }
}
