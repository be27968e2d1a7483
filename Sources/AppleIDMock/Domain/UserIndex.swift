/// Users by the identifiers Apple gives them in each team: the `sub` and the private relay
/// address (apple-behaviour.md §6), so finding a user by either is one dictionary hit under the
/// state lock, never a scan of every user of every team. Both are one-way
/// hashes, so each user's are computed once, when the user is added, and outside the lock
/// (`Entry`); the memory is two entries per user per team.
struct UserIndex: Sendable {
    /// A user and their identifiers in each team of the scenario (2 SHA-256 per team: make it
    /// outside the lock).
    typealias Entry = AddedUser

    /// Whose identifier it is: the user, and the team's place in the scenario's list.
    struct Owner: Sendable, Equatable {
        /// The user's id.
        let userID: String
        /// The index of the team in `Scenario.teams`.
        let team: Int
    }

    private var bySubject: [String: Owner] = [:]
    private var byRelayAddress: [String: Owner] = [:]

    /// An empty index.
    init() {}

    /// The index of `users` (their identifiers computed here), in order.
    init(users: [Scenario.User], teams: [Scenario.Team]) {
        for user in users { insert(Entry(user: user, teams: teams)) }
    }

    /// Adds a user's identifiers. When two pairs of (team, user) share an identifier, the one
    /// of the earlier team in the scenario wins, then the user added first: what a scan of the
    /// teams in order and the users in order found.
    mutating func insert(_ entry: Entry) {
        for (team, subject) in entry.subjects.enumerated() { Self.claim(&bySubject, subject, Owner(userID: entry.user.id, team: team)) }
        for (team, address) in entry.relayAddresses.enumerated() { Self.claim(&byRelayAddress, address, Owner(userID: entry.user.id, team: team)) }
    }

    /// Who has this `sub`, in any team.
    func owner(subject: String) -> Owner? { bySubject[subject] }

    /// Who has this relay address, in any team.
    func owner(relayAddress: String) -> Owner? { byRelayAddress[relayAddress] }

    private static func claim(_ index: inout [String: Owner], _ key: String, _ owner: Owner) {
        if let held = index[key], held.team <= owner.team { return }
        index[key] = owner
    }
}
