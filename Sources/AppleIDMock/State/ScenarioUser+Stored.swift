import JOSE

extension Scenario.User: StoredCodable {
    /// The user as a scenario file writes it (`Scenario.User.json`): `{"id", "email", "given_name",
    /// "family_name", "hide_email", "real_user_status", "relay_domain"}`.
    var stored: JSONValue { json }

    /// Reads `stored` under the rules `AppleIDDomain.addUser` applies; every field is required.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let name: (String) -> String? = { $0.utf8.count <= 256 ? nil : "expected at most 256 bytes" }
        let managed = try reader.optionalBool("managed") ?? false
        self.init(id: try reader.string("id", check: ScenarioRules.userID), email: managed ? "" : try reader.string("email", check: ScenarioRules.email),
                  givenName: try reader.string("given_name", check: name), familyName: try reader.string("family_name", check: name),
                  hideEmail: try reader.bool("hide_email"), realUserStatus: try reader.int("real_user_status", in: 0...2),
                  relayDomain: try reader.choice("relay_domain", RelayDomain.allCases))
        self.managed = managed
        omitsPrivateEmail = try reader.optionalBool("omit_is_private_email") ?? false
        try reader.finish()
    }
}
