@testable import AppleIDMock
import XCTest

/// `Rotation.publishedRange` against a brute-force count over every second of a cycle at steady
/// state, with `KeySchedule`'s formulas and with `KeySchedule` itself (docs/apple-behaviour.md §1.5).
final class PublishedRangeTests: XCTestCase {
    private typealias Rotation = Scenario.SigningKeys.Rotation

    /// The fewest and most keys published at any second of one cycle after the scenario's own
    /// keys (step 0) retired: step k ≥ 1 is published over [start + k·every − publish_ahead,
    /// start + (k+1)·every + retire_after), as `KeySchedule.publishTime` and `retireTime` say.
    private func bruteForce(_ rotation: Rotation, start: Int64 = 1_700_000_000) -> ClosedRange<Int> {
        let (every, ahead, after) = (Int64(rotation.every), Int64(rotation.publishAhead), Int64(rotation.retireAfter))
        let schedule = KeySchedule(rotation: rotation, start: start, initialKeys: ["K0"], activeKeyID: "K0")
        let steady = start + 3 * every + after + ahead
        var counts: [Int] = []
        for now in steady..<(steady + every) {
            let lastStep = (now - start + ahead) / every + 1
            let published = (1...lastStep).filter { k in start + k * every - ahead <= now && now < start + (k + 1) * every + after }
            XCTAssertEqual(schedule.publishedSteps(at: now), published, "\(rotation) at \(now - start)")
            counts.append(published.count)
        }
        return counts.min()!...counts.max()!
    }

    func testPublishedRange_MatchesABruteForceCountOverACycle() {
        var checked = 0
        for every in [60, 61, 90, 97, 120] {
            for ahead in Set([0, 1, 30, every / 2, every - 1, every]) {
                for after in Set([0, 1, 59, every, 2 * every - ahead, 2 * every - ahead - 1, 3 * every + 7, 4 * every - ahead, 4 * every - ahead + 1]) where after >= 0 {
                    let rotation = Rotation(every: every, publishAhead: ahead, retireAfter: after)
                    XCTAssertEqual(rotation.publishedRange, bruteForce(rotation), "\(rotation)")
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 200)
    }

    func testPublishedRange_READMEsFormerPatternFallsTo1To2Keys_TheNewOneKeeps3() {
        let day = 86_400
        let former = Rotation(every: 30 * day, publishAhead: 7 * day, retireAfter: 14 * day)
        XCTAssertEqual(former.publishedRange, 1...2)
        XCTAssertEqual(former.publishedRangeAdvice,
                       "keeps 1 to 2 keys published at steady state, where Apple publishes 3 to 5 (docs/apple-behaviour.md §1.5): "
                       + "make publish_ahead + retire_after at least 2 × every (5184000), e.g. retire_after 4579200, or shorten every")
        // Twins: the advice's own value, and README's pattern, keep 3 keys; 3 to 4 and 5 are fine too.
        XCTAssertEqual(Rotation(every: 30 * day, publishAhead: 7 * day, retireAfter: 4_579_200).publishedRange, 3...3)
        let readme = Rotation(every: 28 * day, publishAhead: 7 * day, retireAfter: 49 * day)
        XCTAssertEqual(readme.publishedRange, 3...3)
        XCTAssertNil(readme.publishedRangeAdvice)
        XCTAssertNil(Rotation(every: 30 * day, publishAhead: 7 * day, retireAfter: 60 * day).publishedRangeAdvice)
        XCTAssertNil(Rotation(every: 60, publishAhead: 60, retireAfter: 180).publishedRangeAdvice)
        // Too many: 5 to 6 keys.
        let crowded = Rotation(every: 60, publishAhead: 60, retireAfter: 181)
        XCTAssertEqual(crowded.publishedRange, 5...6)
        XCTAssertEqual(crowded.publishedRangeAdvice,
                       "keeps 5 to 6 keys published at steady state, where Apple publishes 3 to 5 (docs/apple-behaviour.md §1.5): "
                       + "make publish_ahead + retire_after at most 4 × every (240), e.g. retire_after 180, or lengthen every")
    }
}
