import Dispatch
import Synchronization

/// Long-poll readers asleep until something they watch changes, or their time is up: an
/// event count. A reader takes `ticket` *before* it looks at the data; `sleep` then returns at
/// once if `wake()` ran since, so a change between the look and the sleep is never missed. The
/// writer's `wake()` costs one atomic add when nobody sleeps. `release()` (the mock stopping)
/// wakes every sleeper and lets none sleep again.
final class WakeList: Sendable {
    private struct Sleepers {
        var continuations: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var released = false
    }

    private let generation = Atomic<UInt64>(0)
    private let sleeperCount = Atomic<Int>(0)
    private let sleepers = Mutex(Sleepers())

    /// Taken before looking at the data a sleeper waits on.
    var ticket: UInt64 { generation.load(ordering: .sequentiallyConsistent) }

    /// Whether `release()` ran: readers answer at once with what there is.
    var isReleased: Bool { sleepers.withLock { $0.released } }

    /// Sleeps until `wake()` or `release()` runs after `ticket` was taken, or `seconds` pass.
    func sleep(ticket: UInt64, seconds: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = sleepers.withLock { sleepers -> UInt64? in
                // Counted before the generation is read (both sequentially consistent): a `wake()`
                // either sees this sleeper and takes the lock after it registers, or bumped the
                // generation before this read, and the sleeper does not sleep.
                sleeperCount.add(1, ordering: .sequentiallyConsistent)
                guard !sleepers.released, generation.load(ordering: .sequentiallyConsistent) == ticket else {
                    sleeperCount.subtract(1, ordering: .sequentiallyConsistent)
                    return nil
                }
                sleepers.nextID += 1
                sleepers.continuations[sleepers.nextID] = continuation
                return sleepers.nextID
            }
            guard let id else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0.001, seconds)) { [self] in
                take(id)?.resume()
            }
        }
    }

    /// Wakes every sleeper: what they wait on may have changed.
    func wake() {
        generation.add(1, ordering: .sequentiallyConsistent)
        guard sleeperCount.load(ordering: .sequentiallyConsistent) > 0 else { return }
        for continuation in takeAll(release: false) { continuation.resume() }
    }

    /// Wakes every sleeper and answers later ones at once.
    func release() {
        generation.add(1, ordering: .releasing)
        for continuation in takeAll(release: true) { continuation.resume() }
    }

    /// Sleepers now.
    var count: Int { sleeperCount.load(ordering: .acquiring) }

    private func take(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        sleepers.withLock { sleepers in
            guard let continuation = sleepers.continuations.removeValue(forKey: id) else { return nil }
            sleeperCount.subtract(1, ordering: .releasing)
            return continuation
        }
    }

    private func takeAll(release: Bool) -> [CheckedContinuation<Void, Never>] {
        sleepers.withLock { sleepers in
            if release { sleepers.released = true }
            let all = Array(sleepers.continuations.values)
            sleepers.continuations.removeAll()
            sleeperCount.subtract(all.count, ordering: .releasing)
            return all
        }
    }
}
