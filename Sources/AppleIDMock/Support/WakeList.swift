import Dispatch
import Synchronization

/// Long-poll readers asleep until something they watch changes, or their time is up. A reader
/// looks at the data, then sleeps with `unlessChanged`, which is asked again once the reader is
/// counted: a change between its look and its sleep is never missed. A writer changes the data,
/// then calls `wake()`, which costs a fence and one atomic load while nobody sleeps (no write to
/// memory the readers share: two I/O threads journaling requests do not bounce a cache line).
/// `release()` (the mock stopping) wakes every sleeper and lets none sleep again.
final class WakeList: Sendable {
    private struct Sleepers {
        var continuations: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
        var released = false
    }

    private let sleeperCount = Atomic<Int>(0)
    private let sleepers = Mutex(Sleepers())

    /// Whether `release()` ran: readers answer at once with what there is.
    var isReleased: Bool { sleepers.withLock { $0.released } }

    /// Sleeps until `wake()` or `release()`, or `seconds` pass; returns at once when
    /// `unlessChanged()` (asked once this sleeper is counted) says the data changed since the
    /// caller looked. `unlessChanged` may take the data's own lock (this list's lock is held).
    func sleep(seconds: Double, unlessChanged: () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = sleepers.withLock { sleepers -> UInt64? in
                // Counted (sequentially consistent) before the data is looked at again: a writer
                // either sees this sleeper after its change and wakes it (waiting for this lock,
                // so after it registers), or changed the data before this look.
                sleeperCount.add(1, ordering: .sequentiallyConsistent)
                guard !sleepers.released, !unlessChanged() else {
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

    /// Wakes every sleeper: call it after changing what they wait on.
    func wake() {
        // Orders the caller's change before the count is read (the sleeper's side is its add).
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard sleeperCount.load(ordering: .sequentiallyConsistent) > 0 else { return }
        for continuation in takeAll(release: false) { continuation.resume() }
    }

    /// Wakes every sleeper and answers later ones at once.
    func release() {
        for continuation in takeAll(release: true) { continuation.resume() }
    }

    /// Sleepers now.
    var count: Int { sleeperCount.load(ordering: .acquiring) }

    private func take(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        sleepers.withLock { sleepers in
            guard let continuation = sleepers.continuations.removeValue(forKey: id) else { return nil }
            sleeperCount.subtract(1, ordering: .sequentiallyConsistent)
            return continuation
        }
    }

    private func takeAll(release: Bool) -> [CheckedContinuation<Void, Never>] {
        sleepers.withLock { sleepers in
            if release { sleepers.released = true }
            let all = Array(sleepers.continuations.values)
            sleepers.continuations.removeAll()
            sleeperCount.subtract(all.count, ordering: .sequentiallyConsistent)
            return all
        }
    }
}
