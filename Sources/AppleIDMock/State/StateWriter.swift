import Dispatch
import Glibc
import JOSE
import MiniHTTP
import Synchronization

/// The state file's one writer, on its own thread (never an I/O loop, never the cooperative
/// pool): woken by every operation that recorded events, it takes what is new — the
/// notification log's changes first, then the events (so the deliverer's cursor never runs
/// ahead of the events committed with it), and where the seeded `/auth/keys` order stream
/// stands when it moved — and commits it in one transaction; then the answers waiting for
/// those events go. Operations that happen while a commit runs share the
/// next one (a group commit). A failed commit is kept and tried again a second later, said on
/// the log; answers wait for it. Stopping commits what is left, folds the WAL into the file and
/// closes it, so a stopped mock's file is whole on its own.
final class StateWriter: Sendable {
    private let file: StateFile
    private let state: MockState
    private let notifications: NotificationDeliverer
    private let log: @Sendable (String) -> Void
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// Where the seeded `/auth/keys` order stream stood at start (what the file holds).
    private let startingKeyOrder: SeededRandom.Position?
    /// Resumed when the thread has committed its last batch and ended.
    private let ended = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// A writer of `state` and `notifications` into `file`; call `start()`.
    init(file: StateFile, state: MockState, notifications: NotificationDeliverer, log: @escaping @Sendable (String) -> Void) {
        self.file = file
        self.state = state
        self.notifications = notifications
        self.log = log
        startingKeyOrder = state.keyOrderPosition
        state.subscribe { [wakeup] in wakeup.signal() }
        state.setWriterWakeup(wakeup)
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
        while true {
            wakeup.wait()
            let last = stopping.load(ordering: .relaxed)
            // Every change counted by now is in what is taken next.
            let counted = state.countedChanges
            carried.merge(notifications: notifications.takeChanges())
            let (events, random) = state.takeUnwritten()
            carried.events.append(contentsOf: events)
            if let random { carried.random = random }
            let order = state.keyOrderPosition
            if order != committedOrder { carried.keyOrder = order }
            if !carried.isEmpty {
                do {
                    try file.write(carried)
                    committedOrder = carried.keyOrder ?? committedOrder
                    carried = StateBatch()
                } catch {
                    log("state file \(file.path): commit failed\(last ? "; what was not committed is lost" : ", trying again in a second"): \(error)")
                    if last { break }
                    usleep(1_000_000)
                    wakeup.signal()
                    continue
                }
            }
            state.markCommitted(upTo: counted)
            if last { break }
        }
        file.close()
        // Nothing is committed from now on: an answer still in flight (an in-memory mock's
        // caller) must not wait for it forever.
        state.markCommitted(upTo: .max)
        let waiter = ended.withLock { ended -> CheckedContinuation<Void, Never>? in
            ended.done = true
            return ended.waiter
        }
        waiter?.resume()
    }
}

extension StateBatch {
    /// Adds the notification log's later changes to those not yet committed.
    mutating func merge(notifications later: NotificationChanges?) {
        guard let later else { return }
        guard var earlier = notifications, !later.replaceAll else {
            notifications = later
            return
        }
        let replaced = Set(later.records.map(\.id))
        earlier.records = earlier.records.filter { !replaced.contains($0.id) } + later.records
        earlier.firstLiveID = later.firstLiveID
        earlier.removed += later.removed
        earlier.cursor = later.cursor
        earlier.nextID = later.nextID
        notifications = earlier
    }
}
