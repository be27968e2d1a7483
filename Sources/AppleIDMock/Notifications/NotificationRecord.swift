import JOSE

/// One server-to-server notification as the delivery log shows it (apple-behaviour.md §7):
/// what it says, where it went, every attempt, and how it ended.
public struct NotificationRecord: Sendable, Equatable {
    /// How delivery ended, or that it goes on.
    public enum Outcome: String, Sendable, Equatable, CaseIterable {
        /// Queued or between attempts.
        case pending
        /// The receiver answered 2xx.
        case delivered
        /// Every attempt failed.
        case failed
        /// The app group registered no notification URL: nothing was sent.
        case noURL = "no_url"
        /// A `drop` fault acted on it: nothing was sent.
        case dropped
        /// The mock stopped before delivery ended.
        case abandoned
    }

    /// One try: when (mock time), and the status code or the error.
    public struct Attempt: Sendable, Equatable {
        /// Mock time the attempt began, seconds since 1970 (the deliverer stamps it).
        public var at: Double
        /// The receiver's status code, when it answered.
        public var status: Int?
        /// What went wrong otherwise (refused, timed out, TLS failure, …).
        public var error: String?

        /// An attempt at `at` that got `status`, or failed with `error` (a transport's answer).
        public init(at: Double, status: Int?, error: String?) {
            self.at = at
            self.status = status
            self.error = error
        }
    }

    /// 1, 2, 3, … in the order events happened.
    public let id: UInt64
    /// The event's `type` (`consent-revoked`, `email-disabled`, …).
    public let type: String
    /// The user it is about.
    public let userID: String
    /// The notification's sequence number from the operation that queued it.
    let sequence: UInt64
    /// Where it goes; nil when the app group registered no URL.
    public let url: String?
    /// The payload to sign, until the JWT exists; then the JWT alone carries it, so a long
    /// delivery log keeps one string per notification.
    private(set) var unsigned: [UInt8]?
    /// The kid to sign with (the signer when the event happened).
    let keyID: String?
    /// The signed JWT, once signed (at the first attempt).
    public private(set) var jwt: String?
    /// Every attempt so far.
    public var attempts: [Attempt] = []
    /// Where delivery stands.
    public var outcome: Outcome
    /// Real time the next attempt is due, while pending.
    var dueAt: Double
    /// The injected fault that acted on it: its id and action (`f2 duplicate`).
    var fault: String?

    /// A new record.
    init(id: UInt64, notification: PendingNotification, outcome: Outcome, dueAt: Double) {
        self.id = id
        type = notification.type
        userID = notification.userID
        sequence = notification.sequence
        url = notification.url
        unsigned = notification.payload
        keyID = notification.keyID
        self.outcome = outcome
        self.dueAt = dueAt
    }

    /// A record with exactly these fields, as a state file stored it (`NotificationRecord+Stored.swift`).
    init(id: UInt64, type: String, userID: String, sequence: UInt64, url: String?, unsigned: [UInt8]?, keyID: String?, jwt: String?,
         attempts: [Attempt], outcome: Outcome, dueAt: Double, fault: String?) {
        self.id = id
        self.type = type
        self.userID = userID
        self.sequence = sequence
        self.url = url
        self.unsigned = unsigned
        self.keyID = keyID
        self.jwt = jwt
        self.attempts = attempts
        self.outcome = outcome
        self.dueAt = dueAt
        self.fault = fault
    }

    /// The same record, queued by the event now numbered `sequence` (an older file's events merged).
    func moved(sequence: UInt64) -> NotificationRecord {
        NotificationRecord(id: id, type: type, userID: userID, sequence: sequence, url: url, unsigned: unsigned, keyID: keyID, jwt: jwt,
                           attempts: attempts, outcome: outcome, dueAt: dueAt, fault: fault)
    }

    /// Keeps the signed JWT in place of the payload it carries.
    mutating func signed(_ jwt: String) {
        self.jwt = jwt
        unsigned = nil
    }

    /// Whether a failed attempt is tried again: not once a `once` fault acted on it.
    var retries: Bool { fault.map { !$0.hasSuffix(" " + FaultSpec.Action.once.name) } ?? true }

    /// Whether delivery has ended one way or another.
    var isSettled: Bool { outcome != .pending }

    /// The JWT's claims (`iss`, `aud`, `iat`, `exp`, `jti`, `events`).
    public var claims: JSONObject {
        if let unsigned { return PendingNotification.claims(unsigned) }
        guard let jwt, let token = try? CompactJWS.parse(jwt), let claims = token.payloadJSON else { return JSONObject() }
        return claims
    }

    /// The event object the claims carry.
    package var event: JSONObject { PendingNotification.event(claims) }

    /// The record as the control API lists it.
    package var json: JSONObject {
        let claims = self.claims
        var object = JSONObject()
        object["id"] = .int(Int64(clamping: id))
        object["event"] = .object(PendingNotification.event(claims))
        object["type"] = .string(type)
        object["user"] = .string(userID)
        object["url"] = url.map(JSONValue.string) ?? .null
        object["jwt"] = jwt.map(JSONValue.string) ?? .null
        object["claims"] = .object(claims)
        object["attempts"] = .array(attempts.map { attempt in
            var entry = JSONObject()
            entry["at"] = .string(RFC3339.format(Int64(seconds: attempt.at)))
            entry["status"] = attempt.status.map { .int(Int64($0)) } ?? .null
            entry["error"] = attempt.error.map(JSONValue.string) ?? .null
            return .object(entry)
        })
        object["outcome"] = .string(outcome.rawValue)
        if let fault {
            let parts = fault.split(separator: " ", maxSplits: 1).map(String.init)
            object["fault"] = .object(["id": .string(parts.first ?? fault), "action": .string(parts.count > 1 ? parts[1] : "")])
        } else {
            object["fault"] = .null
        }
        return object
    }
}
