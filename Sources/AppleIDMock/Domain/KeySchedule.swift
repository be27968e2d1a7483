/// Apple's rotation pattern (apple-behaviour.md §1.5 [O]) laid on the mock clock.
///
/// Step 0 is the scenario's keys at start `t0`, its active key signing. Step k ≥ 1 is a new key
/// that is published at `t0 + k·every − publish_ahead`, signs from `t0 + k·every`, and is
/// retired at `t0 + (k+1)·every + retire_after` (step 0's keys likewise at `t0 + every +
/// retire_after`). The pattern is evaluated at "now", not replayed step by step, so a clock
/// moved on by years creates only the keys that are published at the new now: never more
/// than `Rotation.publishedAtOnce`.
struct KeySchedule: Sendable {
    let rotation: Scenario.SigningKeys.Rotation
    /// Mock time the pattern starts at.
    let start: Int64
    /// The kid of each step's key once made (step 0: the scenario's active key).
    var keyIDs: [Int64: String]
    /// Keys of step 0 besides the active one, retired with it.
    let initialExtras: [String]
    /// The latest instant applied: moving the clock back does not un-rotate.
    var horizon: Int64

    init(rotation: Scenario.SigningKeys.Rotation, start: Int64, initialKeys: [String], activeKeyID: String) {
        self.rotation = rotation
        self.start = start
        keyIDs = [0: activeKeyID]
        initialExtras = initialKeys.filter { $0 != activeKeyID }
        horizon = start
    }

    private var every: Int64 { Int64(rotation.every) }

    /// When step `k`'s key is published, and when it is retired (it signs from `start + k·every`).
    func publishTime(_ k: Int64) -> Int64 { k == 0 ? start : start + k * every - Int64(rotation.publishAhead) }
    func retireTime(_ k: Int64) -> Int64 { start + (k + 1) * every + Int64(rotation.retireAfter) }

    /// The step signing at `now`.
    func activeStep(at now: Int64) -> Int64 { now <= start ? 0 : (now - start) / every }

    /// The steps whose keys are published at `now`, oldest first.
    func publishedSteps(at now: Int64) -> [Int64] {
        let newest = now < start ? 0 : (now - start + Int64(rotation.publishAhead)) / every
        let oldest = max(0, now < start ? 0 : (now - start - Int64(rotation.retireAfter)) / every - 1)
        guard newest >= oldest else { return [] }
        return (oldest...newest).filter { publishTime($0) <= now && now < retireTime($0) }
    }
}
