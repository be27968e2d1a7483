extension Int64 {
    /// The seconds of the clamped range: ±10^15, 31 million years either side of 1970.
    static let secondsBound: Double = 1e15

    /// `seconds` as whole seconds, rounded by `rule` and clamped to ±10^15; NaN is 0. Every
    /// renderer of a time read from the clock, a state file or a delivery attempt converts with
    /// it, so no value the mock has accepted can trap a conversion (`Int64(_:)` of 1e19
    /// killed the mock on its clock, feed and dashboard routes).
    init(seconds: Double, rounding rule: FloatingPointRoundingRule = .down) {
        let rounded = seconds.rounded(rule)
        self = rounded.isNaN ? 0 : Int64(Swift.max(-Self.secondsBound, Swift.min(Self.secondsBound, rounded)))
    }
}
