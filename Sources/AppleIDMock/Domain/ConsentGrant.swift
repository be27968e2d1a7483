/// A consent as it was granted (`DomainEvent.consentGranted`): whose, for which app group, and
/// what the user agreed to (apple-reference.md §5, §6).
public struct ConsentGrant: Sendable, Equatable {
    /// User id.
    public var userID: String
    /// The app group's team.
    public var teamID: String
    /// The app group's primary App ID.
    public var groupID: String
    /// The consent's id, never reused.
    public var consentID: UInt32
    /// Scopes granted (`name`, `email`).
    public var scopes: Set<String>
    /// Whether the user chose Hide My Email.
    public var hideEmail: Bool
    /// The relay address the app sees, when the email is hidden.
    public var relayAddress: String?
    /// Mock time of the grant.
    public var at: Int64
}
