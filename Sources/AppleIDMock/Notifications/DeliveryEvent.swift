/// What the notification deliverer did, as a change to the delivery log: a `DomainEvent`
/// (`.delivery`) recorded through the one door, in the one sequence, so the feed shows it and the
/// log is rebuilt by taking up the events in order.
package enum DeliveryEvent: Sendable, Equatable {
    /// An attempt ended: its time and answer, the JWT when this attempt signed it, and the
    /// record's outcome after it (`pending` with the next attempt's real time while it retries).
    case attempted(id: UInt64, attempt: NotificationRecord.Attempt, jwt: String?, outcome: NotificationRecord.Outcome, dueAt: Double?)
    /// The log was cleared of its settled records up to `through` (the newest id then); with
    /// `cancelPending`, its pending ones were abandoned first, so they went too.
    case cleared(through: UInt64, cancelPending: Bool)
    /// A record taken over whole from a state file or export written before delivery was a
    /// record of events.
    case imported(NotificationRecord)

    /// Its name in the feed and a state file (its `DomainEvent.Kind`'s).
    var name: String { DomainEvent.delivery(self).name }
}

/// A delivery event of a version 1 or 2 state file or archive, which kept them in a sequence of
/// their own: its number there, and the last state event the log had taken up when it happened.
/// Read only to be merged into the one sequence (`Merge`).
struct RecordedDelivery: Sendable, Equatable {
    /// 1, 2, 3, … in their own sequence.
    var sequence: UInt64
    /// The last state event the log had taken up.
    var cursor: UInt64
    /// What happened.
    var event: DeliveryEvent

    /// Older delivery events merged into the events, one event at a time: each goes after the
    /// event its cursor names and before the next, and every event moves up by the delivery
    /// events before it, so the sequence is one and the log they rebuild is the same. An imported
    /// record's sequence (the account event that queued it) moves with that event.
    struct Merge {
        /// The delivery events, cursors ascending.
        private let deliveries: [RecordedDelivery]
        private var next = 0
        /// The time of the last event placed: what a delivery event with no time of its own takes.
        private var lastAt = 0.0

        init(_ deliveries: [RecordedDelivery]) {
            self.deliveries = deliveries
        }

        /// `event` moved, after the delivery events that came before it.
        mutating func place(_ event: RecordedEvent) -> [RecordedEvent] {
            var placed: [RecordedEvent] = []
            while next < deliveries.count, deliveries[next].cursor < event.sequence { placed.append(take()) }
            placed.append(RecordedEvent(sequence: event.sequence + UInt64(next), at: event.at, event: event.event))
            lastAt = event.at
            return placed
        }

        /// The delivery events after the last event.
        mutating func rest() -> [RecordedEvent] {
            var placed: [RecordedEvent] = []
            while next < deliveries.count { placed.append(take()) }
            return placed
        }

        /// `events` with `deliveries` merged in.
        static func merged(_ events: [RecordedEvent], _ deliveries: [RecordedDelivery]) -> [RecordedEvent] {
            guard !deliveries.isEmpty else { return events }
            var merge = Merge(deliveries)
            var merged: [RecordedEvent] = []
            merged.reserveCapacity(events.count + deliveries.count)
            for event in events { merged += merge.place(event) }
            return merged + merge.rest()
        }

        /// The next delivery event, placed: after the event its cursor names, and the ones before it.
        private mutating func take() -> RecordedEvent {
            let delivery = deliveries[next]
            next += 1
            var event = delivery.event
            var at = lastAt
            switch event {
            case .attempted(_, let attempt, _, _, _):
                at = attempt.at
            case .imported(let record):
                event = .imported(record.moved(sequence: moved(record.sequence)))
            case .cleared:
                break
            }
            return RecordedEvent(sequence: delivery.cursor + UInt64(next), at: at, event: .delivery(event))
        }

        /// Where the event `sequence` goes: up by the delivery events before it.
        private func moved(_ sequence: UInt64) -> UInt64 {
            var low = 0
            var high = deliveries.count
            while low < high {
                let middle = low + (high - low) / 2
                if deliveries[middle].cursor < sequence { low = middle + 1 } else { high = middle }
            }
            return sequence + UInt64(low)
        }
    }
}

extension RecordedEvent {
    /// Whether it is the deliverer's.
    var isDelivery: Bool {
        if case .delivery = event { true } else { false }
    }
}
