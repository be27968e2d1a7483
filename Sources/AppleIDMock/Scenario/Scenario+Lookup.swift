extension Scenario {
    /// The user with scenario id `id`.
    package func user(_ id: String) -> User? {
        users.first { $0.id == id }
    }

    /// The client with this exact (case-sensitive) id and the team it belongs to.
    package func client(_ clientID: String) -> (team: Team, client: Client)? {
        for team in teams {
            if let client = team.clients.first(where: { $0.clientID == clientID }) { return (team, client) }
        }
        return nil
    }
}
