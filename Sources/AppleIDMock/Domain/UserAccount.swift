/// A user as the mock knows them now: who they are, and what has happened to their account.
package struct UserAccount: Sendable, Equatable {
    /// The person (scenario or runtime).
    package var user: Scenario.User
    /// Whether the Apple Account was deleted (no sign-in, every token dead).
    var deleted = false
    /// Teams whose relay address no longer forwards mail (`email-disabled`).
    var relayDisabledTeams: Set<String> = []
    /// Added through the control API rather than the scenario.
    var addedAtRuntime = false
}
