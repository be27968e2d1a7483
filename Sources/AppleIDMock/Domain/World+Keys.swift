extension World {
    /// The published keys' JWK bytes, in publication order.
    var publishedJWKs: [[UInt8]] { keys.compactMap { $0.state == .retired ? nil : $0.key?.jwkBytes } }

    /// The published key with this kid.
    func publishedKey(_ keyID: String) -> KeyRing.SigningKey? {
        keys.first { $0.keyID == keyID && $0.state != .retired }?.key
    }

    /// Keys at `/auth/keys` now.
    var publishedCount: Int { keys.count { $0.state != .retired } }

    /// `publish` for the control API: refused when `signing_keys.max_published` keys are
    /// published already, so `/auth/keys` stays bounded (probe finding N7).
    mutating func publishWithinBound(_ key: KeyRing.SigningKey, now: Int64) throws(KeyOperationError) {
        let limit = context.scenario.signingKeys.maxPublished
        guard !keys.contains(where: { $0.keyID == key.keyID }) else { throw .duplicate(key.keyID) }
        guard publishedCount < limit else { throw .tooMany(key.keyID, limit: limit) }
        try publish(key, now: now)
    }

    /// One step of Apple's pattern at once: `key` published and signing, the previous keys still
    /// published — but never more than `signing_keys.max_published`: the oldest keys that no
    /// longer sign are retired to make room, as Apple retires old keys. Returns the key it
    /// replaced and the kids it retired.
    mutating func rotate(to key: KeyRing.SigningKey, now: Int64) throws(KeyOperationError) -> (previous: String?, retired: [String]) {
        let previous = signingKey?.keyID
        try publish(key, now: now)
        try activate(key.keyID, now: now)
        var retired: [String] = []
        let limit = context.scenario.signingKeys.maxPublished
        while publishedCount > limit, let oldest = keys.first(where: { $0.state == .published }) {
            try retire(oldest.keyID, now: now)
            retired.append(oldest.keyID)
        }
        return (previous, retired)
    }

    /// Puts `key` at `/auth/keys` without signing with it.
    mutating func publish(_ key: KeyRing.SigningKey, now: Int64) throws(KeyOperationError) {
        guard !keys.contains(where: { $0.keyID == key.keyID }) else { throw .duplicate(key.keyID) }
        keys.append(KeyRecord(key: key, publishedAt: now, activatedAt: nil))
        emit(.keyPublished(kid: key.keyID))
        trimRetiredKeys()
    }

    /// Makes a published key sign new tokens; the previous signer stays published.
    mutating func activate(_ keyID: String, now: Int64) throws(KeyOperationError) {
        guard let index = keys.firstIndex(where: { $0.keyID == keyID }) else { throw .unknown(keyID) }
        guard keys[index].state != .retired else { throw .retired(keyID) }
        guard keys[index].state != .active else { return }
        for other in keys.indices where keys[other].state == .active { keys[other].deactivate() }
        keys[index].activate(at: now)
        activeKeyID = keyID
        emit(.keyActivated(kid: keyID))
    }

    /// Takes a key off `/auth/keys`: what it signed no longer verifies.
    mutating func retire(_ keyID: String, now: Int64) throws(KeyOperationError) {
        guard let index = keys.firstIndex(where: { $0.keyID == keyID }) else { throw .unknown(keyID) }
        guard keys[index].state != .retired else { throw .retired(keyID) }
        guard keys[index].state != .active else { throw .retiringActive(keyID) }
        keys[index].retire(at: now)
        emit(.keyRetired(kid: keyID))
    }

    /// Keeps the history of retired keys bounded (the newest 100).
    private mutating func trimRetiredKeys() {
        let retired = keys.indices.filter { keys[$0].state == .retired }
        guard retired.count > 100 else { return }
        let drop = Set(retired.prefix(retired.count - 100))
        keys = keys.indices.filter { !drop.contains($0) }.map { keys[$0] }
    }

    // MARK: - The scenario's rotation pattern

    /// How many new keys the pattern needs at `now` before `advanceSchedule` can apply it.
    func scheduleNeeds(now: Int64) -> Int {
        guard let schedule else { return 0 }
        let at = max(now, schedule.horizon)
        return schedule.publishedSteps(at: at).filter { schedule.keyIDs[$0] == nil }.count
    }

    /// Brings the published keys and the signer to what the pattern says at `now`, taking new
    /// keys from `fresh` (at least `scheduleNeeds(now:)` of them; the rest are left unused).
    mutating func advanceSchedule(now: Int64, fresh: [KeyRing.SigningKey]) {
        guard var schedule else { return }
        let at = max(now, schedule.horizon)
        var supply = fresh.makeIterator()
        let published = schedule.publishedSteps(at: at)
        // All or nothing: with too few fresh keys (another caller applied first, or generation
        // failed) the pattern waits for the next call rather than half-apply.
        guard published.filter({ schedule.keyIDs[$0] == nil }).count <= fresh.count else { return }
        for step in published where schedule.keyIDs[step] == nil {
            guard var key = supply.next() else { break }
            while keys.contains(where: { $0.keyID == key.keyID }) {
                // A fresh 10-character id that collides is astronomically rare; keep the key, vary the id.
                key = KeyRing.SigningKey(keyID: context.random.alphanumeric(10), privateKey: key.privateKey)
            }
            try? publish(key, now: at)
            schedule.keyIDs[step] = key.keyID
        }
        let activeStep = schedule.activeStep(at: at)
        if let keyID = schedule.keyIDs[activeStep], activeStep > 0 || activeKeyID == keyID {
            try? activate(keyID, now: at)
        }
        let live = Set(published)
        for (step, keyID) in schedule.keyIDs where !live.contains(step) && step < activeStep {
            // A key made to sign by hand stays until it no longer signs.
            guard keyID != activeKeyID else { continue }
            try? retire(keyID, now: at)
            schedule.keyIDs[step] = nil
            if step == 0 {
                for extra in schedule.initialExtras where extra != activeKeyID { try? retire(extra, now: at) }
            }
        }
        schedule.horizon = at
        self.schedule = schedule
    }
}
