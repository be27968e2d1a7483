import JOSE

/// One server-to-server notification as the delivery log shows it (apple-reference.md §7):
/// what it says, where it went, every attempt, and how it ended.
public struct NotificationRecord: Sendable {
    /// How delivery ended, or that it goes on.
    public enum Outcome: String, Sendable, Equatable {
        /// Queued or between attempts.
        case pending
        /// The receiver answered 2xx.
        case delivered
        /// Every attempt failed.
        case failed
        /// The app group registered no notification URL: nothing was sent.
        case noURL = "no_url"
        /// The outbox was full when the event happened: nothing was sent.
        case dropped
        /// The mock stopped before delivery ended.
        case abandoned
    }

    /// One try: when (real time), and the status code or the error.
    public struct Attempt: Sendable, Equatable {
        /// Real time of the attempt, seconds since 1970.
        public var at: Double
        /// The receiver's status code, when it answered.
        public var status: Int?
        /// What went wrong otherwise (refused, timed out, TLS failure, …).
        public var error: String?
    }

    /// 1, 2, 3, … in the order events happened.
    public let id: UInt64
    /// The notification as decided by the event.
    public let notification: PendingNotification
    /// The signed JWT, once signed (at the first attempt).
    public var jwt: String?
    /// Every attempt so far.
    public var attempts: [Attempt] = []
    /// Where delivery stands.
    public var outcome: Outcome
    /// Real time the next attempt is due, while pending.
    var dueAt: Double

    /// A new record.
    init(id: UInt64, notification: PendingNotification, outcome: Outcome, dueAt: Double) {
        self.id = id
        self.notification = notification
        self.outcome = outcome
        self.dueAt = dueAt
    }

    /// Whether delivery has ended one way or another.
    public var isSettled: Bool { outcome != .pending }

    /// The record as the control API lists it.
    public var json: JSONObject {
        var object = JSONObject()
        object["id"] = .int(Int64(id))
        object["event"] = .object(notification.event)
        object["type"] = notification.event["type"] ?? .null
        object["user"] = .string(notification.userID)
        object["url"] = notification.url.map(JSONValue.string) ?? .null
        object["jwt"] = jwt.map(JSONValue.string) ?? .null
        object["claims"] = .object(notification.claims)
        object["attempts"] = .array(attempts.map { attempt in
            var entry = JSONObject()
            entry["at"] = .string(RFC3339.format(Int64(attempt.at.rounded(.down))))
            entry["status"] = attempt.status.map { .int(Int64($0)) } ?? .null
            entry["error"] = attempt.error.map(JSONValue.string) ?? .null
            return .object(entry)
        })
        object["outcome"] = .string(outcome.rawValue)
        return object
    }
}
