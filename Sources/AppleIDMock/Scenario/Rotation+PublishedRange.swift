extension Scenario.SigningKeys.Rotation {
    /// How many keys Apple's JWKS has published at once since 2020 (apple-behaviour.md §1.5 [O]).
    static let applePublished = 3...5

    /// The fewest and the most keys the pattern publishes at once over a full cycle at steady
    /// state (once the scenario's starting keys have retired).
    ///
    /// Step k's key is published from `k·every − publish_ahead` until `(k+1)·every + retire_after`
    /// (`KeySchedule`), a window `span = every + publish_ahead + retire_after` long. The steps
    /// published at an instant t are the integers k with `t − span < k·every − publish_ahead ≤ t`,
    /// a half-open stretch `span / every` steps long: it holds ⌊span / every⌋ of them, or one
    /// more when `every` does not divide `span`, and over a cycle of whole seconds both occur.
    var publishedRange: ClosedRange<Int> {
        let every = max(self.every, 1)  // the scenario's rule is at least 60; never a trap here
        let span = every + publishAhead + retireAfter
        return span / every...(span + every - 1) / every
    }

    /// What to change when the pattern cannot keep Apple's 3 to 5 keys published throughout;
    /// nil when it does.
    package var publishedRangeAdvice: String? {
        let range = publishedRange
        let counts = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
        let apple = Self.applePublished
        let observed = "keeps \(counts) keys published at steady state, where Apple publishes \(apple.lowerBound) to \(apple.upperBound) (docs/apple-behaviour.md §1.5)"
        // ⌊span / every⌋ ≥ 3 ⇔ publish_ahead + retire_after ≥ 2·every; ⌈span / every⌉ ≤ 5 ⇔ publish_ahead + retire_after ≤ 4·every.
        if range.lowerBound < apple.lowerBound {
            let factor = apple.lowerBound - 1
            return "\(observed): make publish_ahead + retire_after at least \(factor) × every (\(factor * every)), "
                + "e.g. retire_after \(factor * every - publishAhead), or shorten every"
        }
        if range.upperBound > apple.upperBound {
            let factor = apple.upperBound - 1
            return "\(observed): make publish_ahead + retire_after at most \(factor) × every (\(factor * every)), "
                + "e.g. retire_after \(factor * every - publishAhead), or lengthen every"
        }
        return nil
    }
}
