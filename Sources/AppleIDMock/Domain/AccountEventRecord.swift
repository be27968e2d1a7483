/// An account event Apple tells an app group about (apple-behaviour.md §7), as decided by the
/// operation that caused it: everything its server-to-server notification carries but the
/// signature. The notification deliverer derives the notification from it.
package struct AccountEventRecord: Sendable, Equatable {
    /// What happened.
    package var type: AccountEventType
    /// The user it is about.
    var userID: String
    /// The app group's team.
    package var teamID: String
    /// The app group's primary App ID (the notification's `aud`).
    var groupID: String
    /// The user's `sub` in the team.
    var subject: String
    /// `event_time`, in the scenario's unit (seconds or milliseconds).
    var eventTime: Int64
    /// Mock time the event happened (the notification's `iat`).
    package var at: Int64
    /// The relay address, for `email-disabled` / `email-enabled`.
    package var email: String?
    /// The notification's `jti`.
    var notificationID: String
    /// The key that signed id_tokens when it happened, which signs its notification (§7) even
    /// when a rotation comes before delivery; nil when none was published.
    var signingKeyID: String?
    /// The index of the scenario timeline event that fired it, if one did.
    var timelineIndex: Int?
    /// The injected fault that acts on its notification, decided with the event.
    var notificationFault: NotificationFault? = nil
}
