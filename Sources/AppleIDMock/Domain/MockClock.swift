/// The mock's notion of "now": real time plus an offset, or frozen at an instant. A value the
/// state owner holds (`StateOwner`); every lifetime reads it (house style rule 10).
package struct MockClock: Sendable, Equatable {
    /// Instants the mock can carry: token and code formats hold issue times as unsigned 32-bit
    /// seconds, so the clock refuses to leave 1970 – 2105 rather than clamp a time silently.
    static let representable: ClosedRange<Int64> = 0...(Int64(UInt32.max) - 366 * 86400)

    /// Seconds added to real time while running.
    package private(set) var offset: Double = 0
    /// The instant the clock stands at while frozen.
    private(set) var frozenAt: Double?

    /// Why the clock cannot move as asked.
    package struct OutOfRange: Error, Equatable, Sendable {
        /// The instant that was asked for.
        var instant: Double
    }

    /// A clock on real time, or starting at `settings.start` (running or frozen).
    init(_ settings: Scenario.ClockSettings = Scenario.ClockSettings(), real: Double) {
        let start = settings.start.map(Double.init) ?? real
        if settings.frozen { frozenAt = start.rounded(.down) } else { offset = start - real }
    }

    /// A clock with exactly these fields, as a state file stored them (`MockClock+Stored.swift`).
    init(offset: Double, frozenAt: Double?) {
        self.offset = offset
        self.frozenAt = frozenAt
    }

    /// Now, in seconds since 1970 with fractions.
    package func now(real: Double) -> Double { frozenAt ?? (real + offset) }

    /// Now, in whole seconds since 1970 (JWT `NumericDate`).
    package func seconds(real: Double) -> Int64 {
        Int64(seconds: now(real: real))
    }

    /// Whether the clock stands still.
    var isFrozen: Bool { frozenAt != nil }

    /// Moves now by `seconds` (back when negative).
    package mutating func advance(by seconds: Double, real: Double) throws(OutOfRange) {
        try set(to: now(real: real) + seconds, real: real)
    }

    /// Sets now to `instant`; the clock keeps running from there unless frozen.
    mutating func set(to instant: Double, real: Double) throws(OutOfRange) {
        guard instant.isFinite, Double(Self.representable.lowerBound) <= instant, instant <= Double(Self.representable.upperBound) else {
            throw OutOfRange(instant: instant)
        }
        if frozenAt != nil { frozenAt = instant } else { offset = instant - real }
    }

    /// Stops the clock at its current instant, or lets it run on from there.
    mutating func setFrozen(_ frozen: Bool, real: Double) {
        if frozen {
            if frozenAt == nil { frozenAt = now(real: real) }
        } else if let instant = frozenAt {
            frozenAt = nil
            offset = instant - real
        }
    }
}
