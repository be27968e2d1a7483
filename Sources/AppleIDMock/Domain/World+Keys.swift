extension World {
    /// The published keys' JWK bytes, oldest first.
    var publishedJWKs: [[UInt8]] { keys.compactMap { $0.state == .retired ? nil : $0.key?.jwkBytes } }

    /// The published key with this kid.
    func publishedKey(_ keyID: String) -> KeyRing.SigningKey? {
        keys.first { $0.keyID == keyID && $0.state != .retired }?.key
    }

    /// Keys at `/auth/keys` now.
    var publishedCount: Int { keys.count { $0.state != .retired } }

    /// `publish` for the control API: refused when `signing_keys.max_published` keys are
    /// published already, so `/auth/keys` stays bounded.
    func publishWithinBound(_ key: KeyRing.SigningKey, now: Int64, _ changes: inout WorldChanges) throws(KeyOperationError) {
        let limit = context.scenario.signingKeys.maxPublished
        guard !keys.contains(where: { $0.keyID == key.keyID }) else { throw .duplicate(key.keyID) }
        guard publishedCount < limit else { throw .tooMany(key.keyID, limit: limit) }
        changes.emit(.keyPublished(key: key, at: now, step: nil))
    }

    /// One step of Apple's pattern at once: `key` published and signing, the previous keys still
    /// published — but never more than `signing_keys.max_published`: the oldest keys that no
    /// longer sign are retired to make room, as Apple retires old keys. Returns the key it
    /// replaced and the kids it retired.
    func rotate(to key: KeyRing.SigningKey, now: Int64, _ changes: inout WorldChanges) throws(KeyOperationError) -> (previous: String?, retired: [String]) {
        guard !keys.contains(where: { $0.keyID == key.keyID }) else { throw .duplicate(key.keyID) }
        let previous = signingKey?.keyID
        changes.emit(.keyPublished(key: key, at: now, step: nil))
        changes.emit(.keyActivated(kid: key.keyID, at: now))
        // After the two events above: the previous signer is published, the new one active.
        let limit = context.scenario.signingKeys.maxPublished
        let excess = max(0, publishedCount + 1 - limit)
        let retired = keys.filter { $0.state != .retired && $0.keyID != key.keyID }.prefix(excess).map(\.keyID)
        for keyID in retired { changes.emit(.keyRetired(kid: keyID, at: now, step: nil)) }
        return (previous, retired)
    }

    /// Makes a published key sign new tokens; the previous signer stays published.
    func activate(_ keyID: String, now: Int64, _ changes: inout WorldChanges) throws(KeyOperationError) {
        guard let record = keys.first(where: { $0.keyID == keyID }) else { throw .unknown(keyID) }
        guard record.state != .retired else { throw .retired(keyID) }
        guard record.state != .active else { return }
        changes.emit(.keyActivated(kid: keyID, at: now))
    }

    /// Takes a key off `/auth/keys`: what it signed no longer verifies.
    func retire(_ keyID: String, now: Int64, _ changes: inout WorldChanges) throws(KeyOperationError) {
        guard let record = keys.first(where: { $0.keyID == keyID }) else { throw .unknown(keyID) }
        guard record.state != .retired else { throw .retired(keyID) }
        guard record.state != .active else { throw .retiringActive(keyID) }
        changes.emit(.keyRetired(kid: keyID, at: now, step: nil))
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
    /// Decided on a scratch copy of the world (only its few keys are copied), so each step sees
    /// the ones before it.
    func advanceSchedule(now: Int64, fresh: [KeyRing.SigningKey], _ changes: inout WorldChanges) {
        guard var schedule else { return }
        let at = max(now, schedule.horizon)
        var supply = fresh.makeIterator()
        let published = schedule.publishedSteps(at: at)
        // All or nothing: with too few fresh keys (another caller applied first, or generation
        // failed) the pattern waits for the next call rather than half-apply.
        guard published.filter({ schedule.keyIDs[$0] == nil }).count <= fresh.count else { return }
        var scratch = self
        var decided: [DomainEvent] = []
        func decide(_ event: DomainEvent) {
            scratch.apply(event)
            decided.append(event)
        }
        for step in published where schedule.keyIDs[step] == nil {
            guard var key = supply.next() else { break }
            while scratch.keys.contains(where: { $0.keyID == key.keyID }) {
                // A fresh 10-character id that collides is astronomically rare; keep the key, vary the id.
                key = KeyRing.SigningKey(keyID: changes.random.alphanumeric(10), privateKey: key.privateKey)
            }
            decide(.keyPublished(key: key, at: at, step: step))
            schedule.keyIDs[step] = key.keyID
        }
        let activeStep = schedule.activeStep(at: at)
        if let keyID = schedule.keyIDs[activeStep], activeStep > 0 || scratch.activeKeyID == keyID,
           let record = scratch.keys.first(where: { $0.keyID == keyID }), record.state == .published {
            decide(.keyActivated(kid: keyID, at: at))
        }
        let live = Set(published)
        for (step, keyID) in schedule.keyIDs.sorted(by: { $0.key < $1.key }) where !live.contains(step) && step < activeStep {
            // A key made to sign by hand stays until it no longer signs.
            guard keyID != scratch.activeKeyID else { continue }
            decide(.keyRetired(kid: keyID, at: at, step: step))
            schedule.keyIDs[step] = nil
            if step == 0 {
                for extra in schedule.initialExtras where extra != scratch.activeKeyID
                    && scratch.keys.contains(where: { $0.keyID == extra && $0.state != .retired }) {
                    decide(.keyRetired(kid: extra, at: at, step: nil))
                }
            }
        }
        // Nothing to change: the horizon stays (applying at `at` or at the older horizon gives the same keys).
        guard !decided.isEmpty else { return }
        for event in decided { changes.emit(event) }
        changes.emit(.keyScheduleAdvanced(at: at))
    }
}
