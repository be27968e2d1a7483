import JOSE

extension AddedUser: StoredCodable {
    /// `{"user": {…}, "subjects": [sub, …], "relay_addresses": [address, …]}`: the identifiers
    /// are stored, not recomputed, as the event carries its whole effect.
    var stored: JSONValue {
        var object = JSONObject()
        object["user"] = user.stored
        object["subjects"] = .array(subjects.map(JSONValue.string))
        object["relay_addresses"] = .array(relayAddresses.map(JSONValue.string))
        return .object(object)
    }

    /// Reads `stored`: a `sub` and a relay address for each team, as many of one as of the other.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        user = try reader.decode("user")
        subjects = try reader.strings("subjects") { ScenarioRules.isSubject($0) ? nil : "expected a sub (NNNNNN.<32 hex>.NNNN)" }
        // The mock makes relay addresses of its own shape on the relay domains only:
        // on icloud.com too, where anyone's own address could otherwise be taken over.
        relayAddresses = try reader.strings("relay_addresses") { address in
            ScenarioRules.email(address) ?? (Identity.isRelayAddress(address) && Identity.hasRelayLocalPart(address) ? nil
                : "expected a private relay address (10 lower-case letters and digits on \(RelayDomain.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        guard relayAddresses.count == subjects.count else {
            throw reader.error("relay_addresses", "expected \(subjects.count) addresses, one per subject")
        }
        try reader.finish()
    }
}
