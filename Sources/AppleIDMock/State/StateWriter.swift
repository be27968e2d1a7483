import CSQLite
import Dispatch
import Glibc
import JOSE
import MiniHTTP
import Synchronization

/// The state file's one writer, on its own thread (never an I/O loop, never the cooperative
/// pool), and the owner of the commit barrier's counts: woken by every change counted (a state
/// event, a delivery event), it takes what is new — the events and delivery events with the
/// seeded streams' positions after them, and where the seeded `/auth/keys` order stream stands
/// when it moved — and commits it in one transaction; then the answers waiting for those
/// changes go. Operations that happen while a commit runs share the
/// next one (a group commit). A failed commit is kept and tried again every second, said on
/// the log; meanwhile the answers that wait for it are told at once that the state file cannot
/// take them (`CommitBarrier.markCommitFailed`), until a commit succeeds. Compaction runs a step at a
/// time between commits. Stopping commits what is left, folds the WAL into the file and
/// closes it, so a stopped mock's file is whole on its own.
final class StateWriter: Sendable {
    private let file: StateFile
    private let owner: StateOwner
    private let barrier: CommitBarrier
    private let log: @Sendable (String) -> Void
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// Where the seeded `/auth/keys` order stream stood at start (what the file holds).
    private let startingKeyOrder: SeededRandom.Position?
    /// Resumed when the thread has committed its last batch and ended.
    private let ended = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// A writer of the state `owner` holds — its events and the deliverer's — into `file`, whose
    /// commits `owner`'s barrier marks; call `start()`.
    init(file: StateFile, owner: StateOwner, log: @escaping @Sendable (String) -> Void) {
        self.file = file
        self.owner = owner
        barrier = owner.events.barrier
        self.log = log
        startingKeyOrder = owner.publishedKeys.orderPosition
        barrier.setWriterWakeup(wakeup)
    }

    /// Starts the writer's thread.
    func start() {
        LoopThread.start(name: "state") { [self] in run() }
    }

    /// Tells the thread to commit what is left and end; returns at once.
    func requestStop() {
        stopping.store(true, ordering: .relaxed)
        wakeup.signal()
    }

    /// Commits what is left and ends the thread; suspends (holding no thread) until it has.
    func stop() async {
        requestStop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { ended -> Bool in
                if !ended.done { ended.waiter = continuation }
                return ended.done
            }
            if done { continuation.resume() }
        }
    }

    private func run() {
        var carried = StateBatch()
        var committedOrder = startingKeyOrder
        /// Since when commits have been failing (nil while they succeed), for the log.
        var failingSince: ContinuousClock.Instant?
        var retries = 0
        /// Compaction waits for the next good commit after a failure of its own.
        var compactionHalted = false
        while true {
            // Compaction runs a step at a time between commits, only while nothing waits to be
            // committed: an answer waits for one step at most, never a whole compaction.
            if file.compactionDue && !compactionHalted && !stopping.load(ordering: .relaxed) {
                if wakeup.wait(timeout: .now()) == .timedOut {
                    do {
                        try file.compactStep()
                    } catch {
                        compactionHalted = true
                        log("state file \(file.path): compaction stopped until the next commit: \(error)")
                    }
                    continue
                }
            } else {
                wakeup.wait()
            }
            let last = stopping.load(ordering: .relaxed)
            // Every change counted by now is in what is taken next.
            let counted = barrier.counted
            carried.merge(owner.takeUnwritten())
            let order = owner.context.keySeed == nil ? nil : owner.publishedKeys.orderPosition
            if order != committedOrder { carried.keyOrder = order }
            if !carried.isEmpty {
                do {
                    try file.write(carried)
                    committedOrder = carried.keyOrder ?? committedOrder
                    carried = StateBatch()
                    compactionHalted = false
                    if let since = failingSince {
                        log("state file \(file.path): commits again, after \(since.duration(to: .now).components.seconds) s of failures")
                        failingSince = nil
                        retries = 0
                    }
                } catch {
                    // Answers waiting for this commit are told at once (503, with the reason),
                    // and so is every answer after them until a commit succeeds (they
                    // waited without end, health's too, while the disk was full).
                    barrier.markCommitFailed(Self.reason(error))
                    if failingSince == nil || retries % 60 == 0 {
                        log("state file \(file.path): commit failed\(last ? "; what was not committed is lost" : ", trying again every second"): \(error)")
                    }
                    if failingSince == nil { failingSince = .now }
                    retries += 1
                    if last { break }
                    usleep(1_000_000)
                    wakeup.signal()
                    continue
                }
            }
            barrier.markCommitted(upTo: counted)
            if last { break }
        }
        file.close()
        // Nothing is committed from now on: an answer still in flight (an in-memory mock's
        // caller) must not wait for it forever.
        barrier.markCommitted(upTo: .max)
        let waiter = ended.withLock { ended -> CheckedContinuation<Void, Never>? in
            ended.done = true
            return ended.waiter
        }
        waiter?.resume()
    }

    /// Why commits fail, as health and the 503 answers say it: `not writable (disk full)`.
    static func reason(_ error: SQLiteError) -> String {
        switch error.code & 0xFF {
        case SQLITE_FULL: "not writable (disk full)"
        case SQLITE_READONLY: "not writable (read-only)"
        case SQLITE_IOERR: "not writable (I/O error: \(error.message))"
        default: "not writable (\(error.message))"
        }
    }
}
