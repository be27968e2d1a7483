extension Scenario {
    /// The verifying half of `Keys/AuthKey_MOCKKEY001.p8`, the default team's developer key.
    package static let defaultDeveloperPublicKey = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZMzuwBsb9tSgJu03xLsF0ZCakk1b\nFQMj7ccnQy9i9MqMbrrcuHIll5Ng4RYgWeG8Jwbh3kK4GGOhqSnDMfy7Aw==\n-----END PUBLIC KEY-----\n"

    /// The built-in scenario: `appleid-mock` with no arguments serves this.
    ///
    /// Team `MOCKTEAM01` with developer key `MOCKKEY001`, App ID `com.example.app`, Services ID
    /// `com.example.web` returning to `https://app.example.com/callback` and
    /// `http://localhost:3000/callback`, sending mail from `example.com`; users `alice` (shares her email), `bob` (hides
    /// his, relayed from `privaterelay.appleid.com`, where nearly every relay address lives) and
    /// `carol` (hides hers, relayed from `private.icloud.com`, where Apple moves new ones): a
    /// backend must accept both relay domains, so the default suite meets both.
    public static let `default` = Scenario(
        teams: [
            Team(
                teamID: "MOCKTEAM01",
                developerKeys: [DeveloperKey(keyID: "MOCKKEY001", publicKeyPEM: defaultDeveloperPublicKey)],
                clients: [
                    Client(clientID: "com.example.app", kind: .appID),
                    Client(clientID: "com.example.web", kind: .servicesID,
                           redirectURIs: ["https://app.example.com/callback", "http://localhost:3000/callback"],
                           primaryAppID: "com.example.app"),
                ],
                emailSources: EmailSources(domains: ["example.com"])
            ),
        ],
        users: [
            User(id: "alice", email: "alice@example.com", givenName: "Alice", familyName: "Appleseed", hideEmail: false, realUserStatus: 2),
            User(id: "bob", email: "bob@example.com", givenName: "Bob", familyName: "Bobson", hideEmail: true, realUserStatus: 2),
            User(id: "carol", email: "carol@example.com", givenName: "Carol", familyName: "Carlsen", hideEmail: true, realUserStatus: 2,
                 relayDomain: .privateICloud),
        ]
    )
}
