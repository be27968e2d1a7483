/// Every client of the scenario with its team, its index (carried inside tokens) and its app
/// group (the primary App ID whose consent it shares, apple-reference.md §5).
public struct ClientDirectory: Sendable {
    /// One registered client.
    public struct Entry: Sendable {
        /// Position in the directory.
        public var index: UInt16
        /// The owning team.
        public var team: Scenario.Team
        /// The client.
        public var client: Scenario.Client
        /// The primary App ID of its group.
        public var groupID: String
    }

    private let entries: [Entry]
    private let byID: [String: Int]

    /// Indexes the scenario's clients in team order.
    public init(scenario: Scenario) {
        var entries: [Entry] = []
        for team in scenario.teams {
            let parents = Dictionary(team.clients.map { ($0.clientID, $0.primaryAppID) }, uniquingKeysWith: { first, _ in first })
            for client in team.clients {
                // Follow primary_app_id links to the group's root (bounded: ids are unique).
                var group = client.clientID
                var hops = 0
                while let parent = parents[group] ?? nil, hops < team.clients.count {
                    group = parent
                    hops += 1
                }
                entries.append(Entry(index: UInt16(entries.count), team: team, client: client, groupID: group))
            }
        }
        self.entries = entries
        byID = Dictionary(entries.enumerated().map { ($1.client.clientID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The client with this exact id.
    public func entry(_ clientID: String) -> Entry? {
        byID[clientID].map { entries[$0] }
    }

    /// The client at `index`.
    public func entry(index: UInt16) -> Entry? {
        Int(index) < entries.count ? entries[Int(index)] : nil
    }

    /// The team with this id.
    public func team(_ teamID: String) -> Scenario.Team? {
        entries.first { $0.team.teamID == teamID }?.team
    }
}
