/// A consent as it was granted (`DomainEvent.consentGranted`): whose, for which app group, and
/// what the user agreed to (apple-behaviour.md §5, §6).
package struct ConsentGrant: Sendable, Equatable {
    /// User id.
    var userID: String
    /// The app group's team.
    package var teamID: String
    /// The app group's primary App ID.
    var groupID: String
    /// The consent's id, never reused.
    var consentID: UInt32
    /// Scopes granted (`name`, `email`).
    package var scopes: Set<String>
    /// Whether the user chose Hide My Email.
    package var hideEmail: Bool
    /// The relay address the app sees, when the email is hidden.
    var relayAddress: String?
    /// Mock time of the grant.
    package var at: Int64
}
