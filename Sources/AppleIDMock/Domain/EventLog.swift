/// The newest events in sequence order, bounded: the oldest leave in O(1) amortized (a moving
/// start, cut off in batches), so recording costs the same at the millionth event as at the first.
struct EventLog: Sendable {
    private var records: [RecordedEvent] = []
    private var start = 0
    /// Most events kept.
    let capacity: Int
    /// The sequence number of the newest event (0 before the first).
    private(set) var lastSequence: UInt64 = 0

    /// An empty log keeping `capacity` events.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// A log holding the newest of `restored` (a state file's events, in sequence order): the
    /// sequence goes on after the last of them.
    init(capacity: Int, restoring restored: [RecordedEvent]) {
        self.capacity = max(1, capacity)
        lastSequence = restored.last?.sequence ?? 0
        // Only a run without gaps is kept: `page` finds events by arithmetic on their sequence.
        var kept: [RecordedEvent] = []
        for recorded in restored.suffix(self.capacity).reversed() {
            if let next = kept.last, next.sequence != recorded.sequence + 1 { break }
            kept.append(recorded)
        }
        records = kept.reversed()
    }

    /// Appends `event` under the next sequence number.
    mutating func append(_ event: DomainEvent, at: Double) -> RecordedEvent {
        lastSequence += 1
        let recorded = RecordedEvent(sequence: lastSequence, at: at, event: event)
        records.append(recorded)
        if records.count - start > capacity {
            start += 1
            if start >= 1024 || start * 2 >= records.count {
                records.removeFirst(start)
                start = 0
            }
        }
        return recorded
    }

    /// The kept events after `after` that `matching` accepts, oldest first, at most `limit`; and
    /// how many events after `after` are no longer kept (a reader that fell behind).
    func page(after: UInt64, limit: Int, matching: (DomainEvent) -> Bool) -> (events: [RecordedEvent], missed: UInt64) {
        let oldest = start < records.count ? records[start].sequence : lastSequence + 1
        // `after` is the caller's, up to UInt64.max: no arithmetic on it may overflow (oldest ≥ 1).
        let missed = oldest - 1 > after ? oldest - 1 - after : 0
        // Sequence numbers are consecutive: the first event after `after` is found by arithmetic.
        let skip = after >= oldest ? after - oldest + 1 : 0
        var index = skip < UInt64(records.count - start) ? start + Int(skip) : records.count
        var found: [RecordedEvent] = []
        while index < records.count && found.count < limit {
            if matching(records[index].event) { found.append(records[index]) }
            index += 1
        }
        return (found, missed)
    }
}
