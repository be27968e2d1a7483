import JOSE

/// Every client of the scenario with its team, its stable tag (carried inside tokens) and its
/// app group (the primary App ID whose consent it shares, apple-behaviour.md §5).
package struct ClientDirectory: Sendable {
    /// One registered client.
    package struct Entry: Sendable {
        /// 48 bits of SHA-256 of the client id: stable however the scenario is reordered or grown.
        var tag: UInt64
        /// The owning team.
        package var team: Scenario.Team
        /// The client.
        package var client: Scenario.Client
        /// The primary App ID of its group.
        var groupID: String
    }

    /// Two client ids whose tags collide (astronomically unlikely; refused at start).
    struct TagCollision: Error, Equatable, Sendable {
        /// The two client ids.
        package var first: String, second: String
    }

    private let byID: [String: Entry]
    private let byTag: [UInt64: Entry]
    private let teams: [String: Scenario.Team]

    /// Indexes the scenario's clients.
    init(scenario: Scenario) throws(TagCollision) {
        var byID: [String: Entry] = [:]
        var byTag: [UInt64: Entry] = [:]
        var teams: [String: Scenario.Team] = [:]
        for team in scenario.teams {
            if teams[team.teamID] == nil { teams[team.teamID] = team }
            let parents = Dictionary(team.clients.map { ($0.clientID, $0.primaryAppID) }, uniquingKeysWith: { first, _ in first })
            for client in team.clients where byID[client.clientID] == nil {
                // Follow primary_app_id links to the group's root (bounded: ids are unique).
                var group = client.clientID
                var hops = 0
                while let parent = parents[group] ?? nil, hops < team.clients.count {
                    group = parent
                    hops += 1
                }
                let entry = Entry(tag: Self.tag(of: client.clientID), team: team, client: client, groupID: group)
                if let existing = byTag[entry.tag] { throw TagCollision(first: existing.client.clientID, second: client.clientID) }
                byID[client.clientID] = entry
                byTag[entry.tag] = entry
            }
        }
        self.byID = byID
        self.byTag = byTag
        self.teams = teams
    }

    /// The stable tag of a client id.
    static func tag(of clientID: String) -> UInt64 {
        SHA256.hash(Array("client|\(clientID)".utf8)).prefix(6).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The client with this exact id.
    func entry(_ clientID: String) -> Entry? { byID[clientID] }

    /// The client with this tag.
    func entry(tag: UInt64) -> Entry? { byTag[tag] }

    /// The team with this id.
    package func team(_ teamID: String) -> Scenario.Team? { teams[teamID] }

    /// The first client of the first team (scenario rules guarantee one), for defaults.
    package func first(of scenario: Scenario) -> Entry? {
        scenario.teams.first?.clients.first.flatMap { entry($0.clientID) }
    }
}
