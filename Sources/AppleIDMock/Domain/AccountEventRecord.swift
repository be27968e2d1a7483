/// An account event Apple tells an app group about (apple-reference.md §7), as decided by the
/// operation that caused it: everything its server-to-server notification carries but the
/// signature. The notification deliverer derives the notification from it.
public struct AccountEventRecord: Sendable, Equatable {
    /// What happened.
    public var type: AccountEventType
    /// The user it is about.
    public var userID: String
    /// The app group's team.
    public var teamID: String
    /// The app group's primary App ID (the notification's `aud`).
    public var groupID: String
    /// The user's `sub` in the team.
    public var subject: String
    /// `event_time`, in the scenario's unit (seconds or milliseconds).
    public var eventTime: Int64
    /// Mock time the event happened (the notification's `iat`).
    public var at: Int64
    /// The relay address, for `email-disabled` / `email-enabled`.
    public var email: String?
    /// The notification's `jti`.
    public var notificationID: String
    /// The key that signed id_tokens when it happened, which signs its notification (§7) even
    /// when a rotation comes before delivery; nil when none was published.
    public var signingKeyID: String?
    /// The index of the scenario timeline event that fired it, if one did.
    public var timelineIndex: Int?
}
