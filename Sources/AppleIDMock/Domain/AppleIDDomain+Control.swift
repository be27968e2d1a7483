import JOSE

extension AppleIDDomain {
    // MARK: - Keys (apple-reference.md §1.5)

    /// Publishes a key without signing with it: `pem` (PKCS#8 RSA-2048) under `keyID`, or a
    /// fresh key, under a fresh 10-character kid like Apple's when none is given.
    public func publishKey(keyID: String?, pem: String?) throws -> String {
        if let keyID, !ScenarioRules.isKeyID(keyID) { throw ControlInputError(message: ScenarioRules.keyIDExpectation, field: "kid") }
        var privateKey: RSAPrivateKey?
        if let pem {
            let key: RSAPrivateKey
            do {
                key = try RSAPrivateKey(pem: pem)
            } catch {
                throw ControlInputError(message: "expected a PEM RSA private key (PKCS#8): \(error)", field: "pem")
            }
            guard key.bits == 2048 else { throw ControlInputError(message: "expected an RSA-2048 key, found \(key.bits) bits", field: "pem") }
            privateKey = key
        }
        return try withFreshKey { fresh, ordinal in
            let key = KeyRing.SigningKey(keyID: keyID ?? fresh.keyID, privateKey: privateKey ?? fresh.privateKey)
            try state.perform { world, now, changes throws(KeyOperationError) in
                try checkOrdinal(world, ordinal)
                try world.publishWithinBound(key, now: now, &changes)
            }
            return key.keyID
        }
    }

    /// Makes a published key sign new tokens.
    public func activateKey(_ keyID: String) throws(KeyOperationError) {
        try state.perform { world, now, changes throws(KeyOperationError) in try world.activate(keyID, now: now, &changes) }
    }

    /// Takes a key off `/auth/keys`; the signing key cannot be retired.
    public func retireKey(_ keyID: String) throws(KeyOperationError) {
        try state.perform { world, now, changes throws(KeyOperationError) in try world.retire(keyID, now: now, &changes) }
    }

    /// One step of Apple's pattern at once: a fresh key published and signing, the previous
    /// keys still published, the oldest retired beyond `signing_keys.max_published`. Returns the
    /// new kid, the one it replaced, and the kids retired to make room.
    public func rotateKeys() throws -> (keyID: String, previous: String?, retired: [String]) {
        try withFreshKey { key, ordinal in
            let (previous, retired) = try state.perform { world, now, changes throws(KeyOperationError) in
                try checkOrdinal(world, ordinal)
                return try world.rotate(to: key, now: now, &changes)
            }.0
            return (key.keyID, previous, retired)
        }
    }

    /// Runs `body` with a key generated outside the lock for the next place in the key
    /// sequence; under `--seed`, again with the next place's key when another operation took
    /// that place first (`KeyOperationError.keySequenceMoved`).
    private func withFreshKey<T>(_ body: (KeyRing.SigningKey, UInt64) throws -> T) throws -> T {
        for _ in 0..<8 {
            let ordinal = state.nextKeyOrdinal
            guard let key = state.generateKeys(1, ordinal: ordinal).first else {
                throw KeyRingError.generationFailed("RSA key generation failed")
            }
            do {
                return try body(key, ordinal)
            } catch KeyOperationError.keySequenceMoved {
                continue
            }
        }
        throw KeyOperationError.keySequenceMoved
    }

    /// Under `--seed`, refuses an operation whose key was made for a place another took.
    private func checkOrdinal(_ world: World, _ ordinal: UInt64) throws(KeyOperationError) {
        if state.seedsKeys && world.keysPublished != ordinal { throw .keySequenceMoved }
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
        let added = AddedUser(user: user, teams: scenario.teams)
        try state.perform { world, _, changes throws(UserOperationError) in try world.addUser(added, &changes) }
        return user
    }

    /// What a device reports for `user` (an id or a `sub`) and the app `clientID`.
    public func credentialState(user: String, clientID: String) throws(ControlInputError) -> CredentialState {
        guard let entry = clients.entry(clientID) else { throw ControlInputError(message: "no client \"\(clientID)\" in the scenario", field: "client_id") }
        return state.read { world, now in world.credentialState(of: user, for: entry, now: now) }
    }
}
