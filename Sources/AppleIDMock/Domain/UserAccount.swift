/// A user as the mock knows them now: who they are, and what has happened to their account.
public struct UserAccount: Sendable, Equatable {
    /// The person (scenario or runtime).
    public var user: Scenario.User
    /// Whether the Apple Account was deleted (no sign-in, every token dead).
    public var deleted = false
    /// Teams whose relay address no longer forwards mail (`email-disabled`).
    public var relayDisabledTeams: Set<String> = []
    /// Added through the control API rather than the scenario.
    public var addedAtRuntime = false
}
