/// The ranges the mock itself produces for the numbers a state file holds: what `state import`
/// and a restart accept, so no value read from disk reaches a conversion or a sum that traps
/// (a clock offset of 1e19, or a time of ±1e308 or −2⁶³, imported and then served,
/// killed the mock on its clock, feed and dashboard routes, and again at every restart).
enum StoredRange {
    /// Whole seconds of mock time: the clock keeps within `MockClock.representable` (up to a year
    /// before 2106, as codes and tokens carry times in 32 bits) and may run on for that year; a
    /// deadline (a code's `expires_at`) lies up to a lifetime (at most a year) beyond.
    static let seconds: ClosedRange<Int64> = 0...(Int64(UInt32.max) + 366 * 86_400)

    /// Mock time with fractions (an event's `at`, an attempt's `at`), and real time (a
    /// notification's `due_at`): the same window as `seconds`.
    static let instants: ClosedRange<Double> = Double(seconds.lowerBound)...Double(seconds.upperBound)

    /// Milliseconds of mock time (an account event's `event_time`).
    static let milliseconds: ClosedRange<Int64> = 0...(seconds.upperBound * 1000)

    /// A clock's offset from real time: mock time minus real time, each within `instants`.
    static let offsets: ClosedRange<Double> = -instants.upperBound...instants.upperBound

    /// Event sequence numbers and notification ids: counters from 1 that stay below 2^53 (a
    /// million a second for a century is 3·10^15), so they never come near a maximum and stay
    /// exact in every JSON reader.
    static let counters: ClosedRange<Int64> = 1...(1 << 53 - 1)

    /// Positions of seeded streams (blocks drawn), counts (codes expired at once), rotation steps
    /// and scenario timeline indexes: below 2^53 as well.
    static let counts: ClosedRange<Int64> = 0...(1 << 53 - 1)

    /// `expected a number from 0 to 4294967295` (integers printed exactly).
    static func expectation(_ range: ClosedRange<Int64>, _ what: String = "an integer") -> String {
        "expected \(what) from \(range.lowerBound) to \(range.upperBound)"
    }

    /// `expected a number of seconds from … to …`.
    static func expectation(_ range: ClosedRange<Double>, _ what: String = "a number") -> String {
        "expected \(what) from \(Int64(range.lowerBound)) to \(Int64(range.upperBound))"
    }
}
