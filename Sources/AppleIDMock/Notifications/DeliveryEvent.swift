/// What the notification deliverer did, as a change to the delivery log: the record of delivery
/// beside the state's own events. It has its own sequence (the feed's sequence numbers stay the
/// state's), and each carries `cursor`, the last state event the log had taken up when it
/// happened: the log is rebuilt by taking up the state's events and these in that order.
enum DeliveryEvent: Sendable, Equatable {
    /// An attempt ended: its time and answer, the JWT when this attempt signed it, and the
    /// record's outcome after it (`pending` with the next attempt's real time while it retries).
    case attempted(id: UInt64, attempt: NotificationRecord.Attempt, jwt: String?, outcome: NotificationRecord.Outcome, dueAt: Double?)
    /// The log was cleared of its settled records up to `through` (the newest id then); with
    /// `cancelPending`, its pending ones were abandoned first, so they went too.
    case cleared(through: UInt64, cancelPending: Bool)
    /// A record taken over whole from a state file or export written before delivery was a
    /// record of events.
    case imported(NotificationRecord)

    /// Its name in a state file.
    var name: String {
        switch self {
        case .attempted: "notification-attempted"
        case .cleared: "notifications-cleared"
        case .imported: "notification-imported"
        }
    }
}

/// A delivery event with its place: its own sequence number, and the state event the log had
/// taken up when it happened.
struct RecordedDelivery: Sendable, Equatable {
    /// 1, 2, 3, … since the state file began.
    var sequence: UInt64
    /// The last state event the log had taken up.
    var cursor: UInt64
    /// What happened.
    var event: DeliveryEvent
}
