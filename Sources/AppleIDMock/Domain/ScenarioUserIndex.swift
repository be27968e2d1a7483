import Synchronization

/// The scenario's users by `sub` and relay address (`UserIndex`), made at the first lookup and
/// kept for the mock's life: a reset never hashes them again, and a mock nobody asks hashes
/// nothing. Read under the state lock (lock order: the state's, then this one's).
final class ScenarioUserIndex: Sendable {
    private let users: [Scenario.User]
    private let teams: [Scenario.Team]
    private let made = Mutex<UserIndex?>(nil)

    /// The index of `scenario`'s users (the first of each id), not yet made.
    init(scenario: Scenario) {
        var seen = Set<String>()
        users = scenario.users.filter { seen.insert($0.id).inserted }
        teams = scenario.teams
    }

    /// The index, made now if this is the first lookup (2 SHA-256 per user per team).
    var index: UserIndex {
        made.withLock { made in
            if let index = made { return index }
            let index = UserIndex(users: users, teams: teams)
            made = index
            return index
        }
    }
}
