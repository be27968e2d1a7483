/// A user added at runtime with the identifiers Apple gives them in each team of the scenario
/// (`DomainEvent.userAdded`): computed once, outside the state lock (two SHA-256 per team), so
/// applying the event hashes nothing.
package struct AddedUser: Sendable, Equatable {
    /// The person.
    package let user: Scenario.User
    /// The user's `sub` in each team, in the scenario's team order.
    package let subjects: [String]
    /// The user's relay address in each team.
    let relayAddresses: [String]

    /// `user` with their identifiers in `teams`.
    init(user: Scenario.User, teams: [Scenario.Team]) {
        self.user = user
        subjects = teams.map { Identity.subject(teamID: $0.teamID, userID: user.id) }
        relayAddresses = teams.map { Identity.relayAddress(teamID: $0.teamID, user: user) }
    }
}
