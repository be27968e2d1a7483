import Synchronization

/// An event with its place in the sequence of all the state's events.
struct RecordedEvent: Sendable, Equatable {
    /// 1, 2, 3, … since the state began (not reset by a reset).
    var sequence: UInt64
    /// Mock time just after the operation that caused it, with fractions.
    var at: Double
    /// What happened.
    var event: DomainEvent
}

/// The record of everything that happened, and its readers: the state's events in one sequence
/// (the newest `capacity` kept in memory), the deliverer's delivery events among them. The state
/// owner appends (inside its critical section, so the order is the operations');
/// everything that reacts reads at its own cursor — the notification deliverer, the state file's
/// writer, the event feed, the dashboard — and none can block an operation: subscribers are told
/// after it, outside its lock, and long-polling readers sleep until an event comes. With a state
/// file, each change is counted by the commit barrier as it is recorded, and kept for the writer.
final class EventStream: Sendable {
    private struct Guarded {
        var log: EventLog
        /// With a state file: events recorded and not yet handed to its writer.
        var unwritten: [RecordedEvent] = []
    }

    /// How many recent events are kept in memory.
    static let capacity = 10_000

    private let guarded: Mutex<Guarded>
    /// The functions told (outside every lock) that events were recorded.
    private let listeners = Mutex<[EventListener]>([])
    /// Feed readers asleep until the next event.
    private let feedReaders = WakeList()
    /// Counts every change for the state file's writer (a barrier that holds nothing without one).
    let barrier: CommitBarrier

    /// A stream going on after `restored` (a state file's events).
    init(barrier: CommitBarrier, restored: [RecordedEvent] = []) {
        self.barrier = barrier
        guarded = Mutex(Guarded(log: EventLog(capacity: Self.capacity, restoring: restored)))
    }

    // MARK: - Recording

    /// Records `events` at mock time `at` under the next sequence numbers (the state owner calls
    /// it inside its critical section); returns them recorded.
    func append(_ events: [DomainEvent], at: Double) -> [RecordedEvent] {
        guard !events.isEmpty else { return [] }
        let recorded = guarded.withLock { guarded in
            let recorded = events.map { guarded.log.append($0, at: at) }
            if barrier.enabled { guarded.unwritten.append(contentsOf: recorded) }
            return recorded
        }
        barrier.count(recorded.count)
        return recorded
    }

    /// Tells the subscribers and wakes the feed readers: events were recorded (called by the
    /// state owner after its critical section).
    func announce() {
        feedReaders.wake()
        for listener in listeners.withLock({ $0 }) { listener.call() }
    }

    /// The events recorded since the last call, for the state file's writer.
    func takeUnwritten() -> [RecordedEvent] {
        guarded.withLock { guarded in
            defer { guarded.unwritten = [] }
            return guarded.unwritten
        }
    }

    // MARK: - Reading

    /// Registers `listener`, called after every operation that recorded events; it reads them
    /// with `events(after:)` at its own cursor, so a slow one never blocks an operation.
    func subscribe(_ listener: @escaping @Sendable () -> Void) {
        let box = EventListener(listener)
        listeners.withLock { $0.append(box) }
    }

    /// The kept events after `after` of the types in `types` (all when nil), oldest first, at
    /// most `limit`; and how many after `after` are no longer kept.
    func events(after: UInt64 = 0, limit: Int = .max, types: Set<String>? = nil) -> (events: [RecordedEvent], missed: UInt64) {
        guarded.withLock { guarded in
            guarded.log.page(after: after, limit: limit) { types?.contains($0.name) ?? true }
        }
    }

    /// The newest event's sequence number (0 before the first).
    var lastSequence: UInt64 { guarded.withLock { $0.log.lastSequence } }

    /// Waits up to `seconds` (real time, read by `realTime`) for an event after `after` of
    /// `types`; returns what `events` would. A reader sleeps until an event is recorded or its
    /// time is up, never polling.
    func awaitEvents(after: UInt64, limit: Int, types: Set<String>?, seconds: Double,
                     realTime: @Sendable () -> Double) async -> (events: [RecordedEvent], missed: UInt64) {
        let deadline = realTime() + seconds
        while true {
            let seen = lastSequence
            let page = events(after: after, limit: limit, types: types)
            let left = deadline - realTime()
            if !page.events.isEmpty || page.missed > 0 || left <= 0 || Task.isCancelled || feedReaders.isReleased { return page }
            await feedReaders.sleep(seconds: left) { lastSequence != seen }
        }
    }

    /// Wakes every feed reader, and answers later ones at once: a mock that stops does not hold
    /// its shutdown for long polls.
    func releaseReaders() {
        feedReaders.release()
    }

    /// Feed readers asleep now.
    var waitingReaders: Int { feedReaders.count }
}
