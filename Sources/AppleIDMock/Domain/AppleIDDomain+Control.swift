import JOSE

/// Bad input to a control operation: what is wrong and the field at fault (400).
public struct ControlInputError: Error, Equatable, Sendable {
    /// What is wrong.
    public var message: String
    /// The field at fault.
    public var field: String
}

extension AppleIDDomain {
    // MARK: - Keys (apple-reference.md §1.5)

    /// Publishes a key without signing with it: `pem` (PKCS#8 RSA-2048) under `keyID`, or a
    /// fresh key, under a fresh 10-character kid like Apple's when none is given.
    public func publishKey(keyID: String?, pem: String?) throws -> String {
        if let keyID, !ScenarioRules.isKeyID(keyID) { throw ControlInputError(message: ScenarioRules.keyIDExpectation, field: "kid") }
        let key: KeyRing.SigningKey
        if let pem {
            let privateKey: RSAPrivateKey
            do {
                privateKey = try RSAPrivateKey(pem: pem)
            } catch {
                throw ControlInputError(message: "expected a PEM RSA private key (PKCS#8): \(error)", field: "pem")
            }
            guard privateKey.bits == 2048 else { throw ControlInputError(message: "expected an RSA-2048 key, found \(privateKey.bits) bits", field: "pem") }
            key = KeyRing.SigningKey(keyID: keyID ?? random.alphanumeric(10), privateKey: privateKey)
        } else {
            key = try KeyRing.generate(keyID: keyID, random: random)
        }
        try state.perform { world, now throws(KeyOperationError) in try world.publishWithinBound(key, now: now) }
        return key.keyID
    }

    /// Makes a published key sign new tokens.
    public func activateKey(_ keyID: String) throws(KeyOperationError) {
        try state.perform { world, now throws(KeyOperationError) in try world.activate(keyID, now: now) }
    }

    /// Takes a key off `/auth/keys`; the signing key cannot be retired.
    public func retireKey(_ keyID: String) throws(KeyOperationError) {
        try state.perform { world, now throws(KeyOperationError) in try world.retire(keyID, now: now) }
    }

    /// One step of Apple's pattern at once: a fresh key published and signing, the previous
    /// keys still published, the oldest retired beyond `signing_keys.max_published`. Returns the
    /// new kid, the one it replaced, and the kids retired to make room.
    public func rotateKeys() throws -> (keyID: String, previous: String?, retired: [String]) {
        let key = try KeyRing.generate(random: random)
        let (previous, retired) = try state.perform { world, now throws(KeyOperationError) in try world.rotate(to: key, now: now) }.0
        return (key.keyID, previous, retired)
    }

    // MARK: - Users

    /// Adds a user at runtime under the scenario's rules; returns it.
    public func addUser(_ user: Scenario.User) throws -> Scenario.User {
        if let message = ScenarioRules.userID(user.id) { throw ControlInputError(message: message, field: "id") }
        if let message = ScenarioRules.email(user.email) { throw ControlInputError(message: message, field: "email") }
        for (field, value) in [("given_name", user.givenName), ("family_name", user.familyName)] where value.utf8.count > 256 {
            throw ControlInputError(message: "expected at most 256 bytes", field: field)
        }
        guard (0...2).contains(user.realUserStatus) else { throw ControlInputError(message: "expected 0, 1 or 2", field: "real_user_status") }
        // Its `sub` and relay address in every team are hashed here, outside the lock.
        let entry = UserIndex.Entry(user: user, teams: scenario.teams)
        try state.perform { world, _ throws(UserOperationError) in try world.addUser(entry) }
        return user
    }

    /// What a device reports for `user` (an id or a `sub`) and the app `clientID`.
    public func credentialState(user: String, clientID: String) throws(ControlInputError) -> CredentialState {
        guard let entry = clients.entry(clientID) else { throw ControlInputError(message: "no client \"\(clientID)\" in the scenario", field: "client_id") }
        return state.read { world, now in world.credentialState(of: user, for: entry, now: now) }
    }
}
