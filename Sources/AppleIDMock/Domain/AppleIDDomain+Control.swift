import JOSE

extension AppleIDDomain {
    // MARK: - Keys (apple-behaviour.md §1.5)

    /// Publishes a key without signing with it: `privateKey` (RSA-2048) under `keyID`, or a
    /// fresh key, under a fresh 10-character kid like Apple's when none is given. The endpoint
    /// decodes and checks both (the kid's form, the key's size).
    func publishKey(keyID: String?, privateKey: RSAPrivateKey?) async throws(KeyOperationError) -> String {
        try await withFreshKey { fresh, ordinal throws(KeyOperationError) in
            let key = KeyRing.SigningKey(keyID: keyID ?? fresh.keyID, privateKey: privateKey ?? fresh.privateKey)
            try owner.perform { world, now, changes throws(KeyOperationError) in
                try checkOrdinal(world, ordinal)
                try world.publishWithinBound(key, now: now, &changes)
            }
            return key.keyID
        }
    }

    /// Makes a published key sign new tokens.
    func activateKey(_ keyID: String) throws(KeyOperationError) {
        try owner.perform { world, now, changes throws(KeyOperationError) in try world.activate(keyID, now: now, &changes) }
    }

    /// Takes a key off `/auth/keys`; the signing key cannot be retired.
    func retireKey(_ keyID: String) throws(KeyOperationError) {
        try owner.perform { world, now, changes throws(KeyOperationError) in try world.retire(keyID, now: now, &changes) }
    }

    /// One step of Apple's pattern at once: a fresh key published and signing, the previous
    /// keys still published, the oldest retired beyond `signing_keys.max_published`. Returns the
    /// new kid, the one it replaced, and the kids retired to make room.
    func rotateKeys() async throws(KeyOperationError) -> (keyID: String, previous: String?, retired: [String]) {
        try await withFreshKey { key, ordinal throws(KeyOperationError) in
            let (previous, retired) = try owner.perform { world, now, changes throws(KeyOperationError) in
                try checkOrdinal(world, ordinal)
                return try world.rotate(to: key, now: now, &changes)
            }.0
            return (key.keyID, previous, retired)
        }
    }

    /// Runs `body` with a key generated on the work thread (off the I/O loops and the pool, never
    /// inside the lock) for the next place in the key sequence; under `--seed`, again with the next
    /// place's key when another operation took that place first (`.keySequenceMoved`).
    private func withFreshKey<T>(_ body: (KeyRing.SigningKey, UInt64) throws(KeyOperationError) -> T) async throws(KeyOperationError) -> T {
        for _ in 0..<8 {
            let ordinal = owner.read { world, _ in world.keysPublished }
            guard let key = await blockingWork.run({ [self] in generateKeys(1, ordinal: ordinal) }).first else {
                throw .generationFailed
            }
            do throws(KeyOperationError) {
                return try body(key, ordinal)
            } catch .keySequenceMoved {
                continue
            }
        }
        throw .keySequenceMoved
    }

    /// Under `--seed`, refuses an operation whose key was made for a place another took.
    private func checkOrdinal(_ world: World, _ ordinal: UInt64) throws(KeyOperationError) {
        if owner.context.keySeed != nil && world.keysPublished != ordinal { throw .keySequenceMoved }
    }

    // MARK: - Users

    /// Adds a user at runtime under the scenario's rules; returns it.
    func addUser(_ user: Scenario.User) throws -> Scenario.User {
        if let message = ScenarioRules.userID(user.id) { throw ControlInputError(message: message, field: "id") }
        if !user.managed, let message = ScenarioRules.email(user.email) { throw ControlInputError(message: message, field: "email") }
        for (field, value) in [("given_name", user.givenName), ("family_name", user.familyName)] where value.utf8.count > 256 {
            throw ControlInputError(message: "expected at most 256 bytes", field: field)
        }
        guard (0...2).contains(user.realUserStatus) else { throw ControlInputError(message: "expected 0, 1 or 2", field: "real_user_status") }
        // Its `sub` and relay address in every team are hashed here, outside the lock.
        let added = AddedUser(user: user, teams: scenario.teams)
        try owner.perform { world, _, changes throws(UserOperationError) in try world.addUser(added, &changes) }
        return user
    }

    /// What a device reports for `user` (an id or a `sub`) and the app `clientID`.
    func credentialState(user: String, clientID: String) throws(ControlInputError) -> CredentialState {
        guard let entry = clients.entry(clientID) else { throw ControlInputError(message: "no client \"\(clientID)\" in the scenario", field: "client_id") }
        return owner.read { world, now in world.credentialState(of: user, for: entry, now: now) }
    }
}
