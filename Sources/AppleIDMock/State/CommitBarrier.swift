import Dispatch
import Synchronization

/// With a state file, what an answer depends on is committed before the answer goes: every
/// change (a state event, a delivery event) is counted here as it is recorded, the state file's
/// writer marks counts committed, and an answer waits for the count it could show. The route
/// table's one way to add a deferred route (`MockRouter`) goes through `settle`, so no output can
/// forget it; `/auth/keys` and health read only what is committed and never wait. Without a state
/// file nothing waits. While the writer's commits fail (a full disk), waits end at once with the
/// reason (`CommitFailure`), until a commit succeeds.
final class CommitBarrier: Sendable {
    private struct Counts {
        var changes: UInt64 = 0
        var committed: UInt64 = 0
        /// Answers waiting for a count to be committed: resumed true when it is, false when a
        /// commit fails first.
        var waiters: [(through: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        /// Why the writer's last commit failed; nil once one succeeds.
        var failure: String?
        /// Told each count that is committed (the published keys take up their pending set).
        var committedListeners: [@Sendable (UInt64) -> Void] = []
    }

    /// Whether answers wait (a state file is written).
    let enabled: Bool
    private let counts = Mutex(Counts())
    /// The writer's wakeup: signalled with every change counted.
    private let writerWakeup = Mutex<DispatchSemaphore?>(nil)

    /// A barrier that holds answers (with a state file) or lets them all go (`enabled` false).
    init(enabled: Bool) {
        self.enabled = enabled
    }

    // MARK: - Counting (the event stream, the writer)

    /// Counts `count` changes just recorded and wakes the writer; returns the count after them
    /// (what an answer showing them waits for). Nothing is counted without a state file.
    @discardableResult
    func count(_ count: Int) -> UInt64 {
        guard enabled, count > 0 else { return 0 }
        let total = counts.withLock { counts -> UInt64 in
            counts.changes &+= UInt64(count)
            return counts.changes
        }
        writerWakeup.withLock { $0 }?.signal()
        return total
    }

    /// How many changes have been counted: read before taking them, it is what a commit of
    /// everything taken covers.
    var counted: UInt64 { counts.withLock { $0.changes } }

    /// The writer's wakeup for every change counted.
    func setWriterWakeup(_ wakeup: DispatchSemaphore) {
        writerWakeup.withLock { $0 = wakeup }
    }

    /// Calls `listener` with every count that is committed.
    func onCommitted(_ listener: @escaping @Sendable (UInt64) -> Void) {
        counts.withLock { $0.committedListeners.append(listener) }
    }

    /// Marks the first `count` changes committed (a commit succeeded: the state file is writable
    /// again), then the answers waiting for them go.
    func markCommitted(upTo count: UInt64) {
        let (ready, listeners, committed) = counts.withLock { counts -> ([CheckedContinuation<Bool, Never>], [@Sendable (UInt64) -> Void], UInt64) in
            counts.committed = max(counts.committed, count)
            counts.failure = nil
            let committed = counts.committed
            let ready = counts.waiters.filter { $0.through <= committed }.map(\.continuation)
            if !ready.isEmpty { counts.waiters.removeAll { $0.through <= committed } }
            return (ready, counts.committedListeners, committed)
        }
        for listener in listeners { listener(committed) }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// A commit failed for `reason` (`not writable (disk full)`): every answer waiting for one
    /// is told now, and later ones that depend on an uncommitted change are told at once, until
    /// a commit succeeds. The changes stay, to be committed then.
    func markCommitFailed(_ reason: String) {
        let waiting = counts.withLock { counts -> [CheckedContinuation<Bool, Never>] in
            counts.failure = reason
            defer { counts.waiters.removeAll() }
            return counts.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Why the state file's commits fail now; nil while they succeed (and without a state file).
    var failure: CommitFailure? {
        counts.withLock { $0.failure }.map(CommitFailure.init)
    }

    // MARK: - Waiting (answers)

    /// Returns once every change counted so far is committed, so an answer that depends on an
    /// operation is sent only after its commit; throws at once while the file's commits fail (or
    /// when the commit waited for fails). At once without a state file.
    func settle() async throws(CommitFailure) {
        guard enabled else { return }
        let (target, failure) = counts.withLock { ($0.changes, $0.committed < $0.changes ? $0.failure : nil) }
        if let failure { throw CommitFailure(reason: failure) }
        guard counts.withLock({ $0.committed < target }) else { return }
        let committed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiting = counts.withLock { counts -> Bool in
                guard counts.committed < target, counts.failure == nil else { return false }
                counts.waiters.append((target, continuation))
                return true
            }
            if !waiting { continuation.resume(returning: counts.withLock { $0.committed >= target }) }
        }
        guard committed else { throw CommitFailure(reason: counts.withLock { $0.failure } ?? "not writable") }
    }
}
