/// What the dashboard needs to know of the scenario, worked out once when the routes are built:
/// the teams, the app groups with their clients, and which client names a team or the whole
/// scenario in an account event (`POST /__mock/events` takes a `client_id`).
struct DashboardDirectory: Sendable {
    /// One app group: the clients that share a consent (apple-behaviour.md §5).
    struct Group: Sendable {
        /// The owning team.
        var teamID: String
        /// The group's primary App ID, itself a client: what a revoke button names.
        var groupID: String
        /// Every client of the group, in scenario order.
        var clientIDs: [String]
    }

    /// The scenario's teams in order, each with the client its relay buttons name.
    let teams: [(teamID: String, firstClient: String)]
    /// Every app group, in scenario order.
    let groups: [Group]
    /// Groups by team and primary App ID.
    private let groupIndex: [String: Int]
    /// The client an account deletion names (the first of the first team).
    let accountClient: String
    /// Every client id, for the requests filter's suggestions.
    let clientIDs: [String]
    /// Every route template, for the requests filter's suggestions.
    let routes: [String]

    /// The directory of `domain`'s scenario, suggesting `routes` in the requests filter.
    init(domain: AppleIDDomain, routes: [String]) {
        var teams: [(String, String)] = []
        var groups: [Group] = []
        var index: [String: Int] = [:]
        var clientIDs: [String] = []
        for team in domain.scenario.teams {
            guard let first = team.clients.first else { continue }
            teams.append((team.teamID, first.clientID))
            for client in team.clients {
                clientIDs.append(client.clientID)
                guard let entry = domain.clients.entry(client.clientID), entry.team.teamID == team.teamID else { continue }
                let key = Self.key(team.teamID, entry.groupID)
                if let position = index[key] {
                    groups[position].clientIDs.append(client.clientID)
                } else {
                    index[key] = groups.count
                    groups.append(Group(teamID: team.teamID, groupID: entry.groupID, clientIDs: [client.clientID]))
                }
            }
        }
        self.teams = teams
        self.groups = groups
        groupIndex = index
        accountClient = teams.first?.1 ?? ""
        self.clientIDs = clientIDs
        self.routes = routes
    }

    /// The group of `teamID` whose primary App ID is `groupID`.
    func group(teamID: String, groupID: String) -> Group? {
        groupIndex[Self.key(teamID, groupID)].map { groups[$0] }
    }

    /// The clients of `teamID`, in scenario order.
    func clients(ofTeam teamID: String) -> [String] {
        groups.filter { $0.teamID == teamID }.flatMap(\.clientIDs)
    }

    private static func key(_ teamID: String, _ groupID: String) -> String { teamID + "\u{0}" + groupID }
}
