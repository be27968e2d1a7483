import JOSE

extension AppleIDDomain {
    // MARK: - The clock

    /// A change to the clock.
    enum ClockChange: Sendable, Equatable {
        /// Move by seconds (back when negative).
        case advance(Double)
        /// Go to an instant, seconds since 1970.
        case set(Double)
        /// Stand still, or run on.
        case freeze(Bool)
    }

    /// Mock now in whole seconds.
    package var now: Int64 { owner.read { _, now in now } }

    /// Mock now with fractions.
    var preciseNow: Double { owner.readPrecisely { _, now, _ in now } }

    /// The clock as it stands.
    var clockState: MockClock { owner.read { world, _ in world.clock } }

    /// Mock now with fractions, and how far the clock is ahead of real time (behind when negative).
    var clockReading: (now: Double, offset: Double, clock: MockClock) {
        owner.readPrecisely { world, now, real in (now, now - real, world.clock) }
    }

    /// Why a clock move must be decided again: the keys it generated no longer fit.
    private enum ClockMoveRefusal: Error {
        case outOfRange(MockClock.OutOfRange)
        case keysChanged
    }

    /// Applies `changes` in order as one operation — all of them, or none when one leaves the
    /// clock's range — together with what the rotation pattern does at the new time: a request
    /// never sees the new time with the old signer. The keys the pattern needs are generated
    /// first, on the work thread and outside the lock; if another operation got in between, it
    /// is decided again. Returns the clock as moved.
    @discardableResult
    func moveClock(_ changes: [ClockChange]) async throws(MockClock.OutOfRange) -> MockClock {
        for attempt in 0..<4 {
            let needed = try owner.readPrecisely { world, _, real throws(MockClock.OutOfRange) -> (count: Int, ordinal: UInt64) in
                let clock = try Self.moved(world.clock, changes, real: real)
                return (world.scheduleNeeds(now: clock.seconds(real: real)), world.keysPublished)
            }
            let fresh = needed.count > 0 ? await blockingWork.run { [self] in generateKeys(needed.count, ordinal: needed.ordinal) } : []
            let lastTry = attempt == 3
            do throws(ClockMoveRefusal) {
                try owner.perform { world, _, decided throws(ClockMoveRefusal) in
                    let clock: MockClock
                    do throws(MockClock.OutOfRange) {
                        clock = try Self.moved(world.clock, changes, real: decided.real)
                    } catch {
                        throw .outOfRange(error)
                    }
                    let now = clock.seconds(real: decided.real)
                    let stale = world.scheduleNeeds(now: now) > fresh.count || (owner.context.keySeed != nil && world.keysPublished != needed.ordinal)
                    if stale && !lastTry { throw .keysChanged }
                    decided.emit(.clockChanged(clock: clock, now: now))
                    world.advanceSchedule(now: now, fresh: fresh, &decided)
                }
                return clockState
            } catch {
                if case .outOfRange(let error) = error { throw error }
            }
        }
        return clockState
    }

    /// `clock` after `changes`.
    private static func moved(_ clock: MockClock, _ changes: [ClockChange], real: Double) throws(MockClock.OutOfRange) -> MockClock {
        var clock = clock
        for change in changes {
            switch change {
            case .advance(let seconds): try clock.advance(by: seconds, real: real)
            case .set(let instant): try clock.set(to: instant, real: real)
            case .freeze(let frozen): clock.setFrozen(frozen, real: real)
            }
        }
        return clock
    }

    /// What the passing of real time does while the clock runs (the server's tick, once a
    /// second, on the work thread): the scenario's timeline fires up to now, and the rotation
    /// pattern is brought to now, its keys generated outside the lock. `stopping` cuts a long
    /// catch-up short.
    func tick(stopping: () -> Bool) {
        owner.perform { _, _, _ in }
        let (needed, ordinal, scheduled) = owner.read { world, now in (world.scheduleNeeds(now: now), world.keysPublished, world.schedule != nil) }
        guard scheduled else { return }
        var fresh: [KeyRing.SigningKey] = []
        for index in 0..<needed {
            guard !stopping() else { return }
            guard let key = generateKeys(1, ordinal: ordinal + UInt64(index)).first else { break }
            fresh.append(key)
        }
        owner.perform { world, now, changes in
            // Under --seed a key is the nth key's; another operation took that place: the next tick tries again.
            guard owner.context.keySeed == nil || world.keysPublished == ordinal else { return }
            world.advanceSchedule(now: now, fresh: fresh, &changes)
        }
    }

    /// `count` fresh RSA-2048 keys, the first to be the `ordinal`th key published: under
    /// `--seed`, the same keys and kids in every run (derived from the seed and the ordinal);
    /// otherwise from OpenSSL's generator. Slow: called on the work thread, never inside the lock.
    func generateKeys(_ count: Int, ordinal: UInt64) -> [KeyRing.SigningKey] {
        (0..<count).compactMap { index in
            guard let seed = owner.context.keySeed else { return try? KeyRing.generate() }
            let stream = seed.derived("key \(ordinal + UInt64(index))")
            var random = RandomSource(stream: stream.derived("kid"))
            var material = stream.derived("rsa")
            let keyID = random.alphanumeric(10)
            guard let privateKey = try? RSAPrivateKey.generate(bits: 2048, seed: material.bytes(32)) else { return nil }
            return KeyRing.SigningKey(keyID: keyID, privateKey: privateKey)
        }
    }

    // MARK: - Account events and reset

    /// A user's action at Apple (§7): applies it; returns the sequence numbers of the account
    /// events Apple tells app groups about (each one notification), so the caller finds its own
    /// records in the delivery log whatever else happens at the same time.
    @discardableResult
    func accountEvent(_ type: AccountEventType, user: String, clientID: String) throws(AccountEventError) -> [UInt64] {
        guard let entry = clients.entry(clientID) else {
            throw AccountEventError(.unknown, message: "no client \"\(clientID)\" in the scenario", field: "client_id")
        }
        return try owner.perform { world, now, changes throws(AccountEventError) in
            guard let (userID, _) = world.resolveUser(user) else { throw AccountEventError(.unknown, message: "no user \"\(user)\"", field: "user") }
            try world.accountEvent(type, userID: userID, entry: entry, now: now, &changes)
        }.1.compactMap { recorded in
            guard case .accountEvent(let record) = recorded.event, record.timelineIndex == nil else { return nil }
            return recorded.sequence
        }
    }

    /// `user` (an id or a `sub`) changed their Apple Account password: the refresh tokens of every
    /// app answer `invalid_grant`, and no notification is sent (§9). Returns the user's id.
    func passwordChanged(user: String) throws(AccountEventError) -> String {
        try owner.perform { world, _, changes throws(AccountEventError) in
            guard let (userID, _) = world.resolveUser(user) else { throw AccountEventError(.unknown, message: "no user \"\(user)\"", field: "user") }
            try world.passwordChanged(userID: userID, &changes)
            return userID
        }.0
    }

    /// Everything back to the scenario's initial state in one operation: users, consents,
    /// codes, transfers, keys, clock, faults. The MAC secret is new, so no code or token from
    /// before works after; queued notifications are abandoned (the deliverer reads the reset).
    /// Returns the signer and mock now after it.
    @discardableResult
    func reset() -> (signingKeyID: String?, now: Int64) {
        owner.perform { world, _, changes in
            let clock = MockClock(scenario.clock, real: changes.real)
            changes.emit(.reset(ResetRecord(clock: clock, now: clock.seconds(real: changes.real), secret: changes.random.bytes(32),
                                            firstConsentID: world.nextConsentID)))
        }
        return owner.read { world, now in (world.signingKey?.keyID, now) }
    }

    // MARK: - Reads

    /// Every user in order, with their account state.
    package var users: [UserAccount] { owner.read { world, _ in world.userOrder.compactMap { world.users[$0] } } }

    /// At most `limit` users from `offset` in order, and how many there are: a page, read
    /// without copying the rest.
    package func users(offset: Int, limit: Int) -> (users: [UserAccount], total: Int) {
        owner.read { world, _ in
            let order = world.userOrder
            let start = min(max(0, offset), order.count)
            let end = start + min(max(0, limit), order.count - start)
            return (order[start..<end].compactMap { world.users[$0] }, order.count)
        }
    }

    /// The user with this id.
    package func user(_ userID: String) -> UserAccount? { owner.read { world, _ in world.users[userID] } }

    /// Every key the mock has known, in the order they were published, and the one that signs now.
    package var keys: (records: [KeyRecord], signingKeyID: String?) { owner.read { world, _ in (world.keys, world.signingKey?.keyID) } }

    /// The key that signs id_tokens now, which signs notifications too (§7).
    var signingKey: KeyRing.SigningKey? { owner.read { world, _ in world.signingKey } }

    /// The published key with `kid`, private half included (to sign what it was chosen for).
    func publishedKey(_ keyID: String) -> KeyRing.SigningKey? { owner.read { world, _ in world.publishedKey(keyID) } }

    /// What `/auth/keys` serves, and the signer health names: as of the last commit.
    var publishedKeys: PublishedKeys { owner.publishedKeys }

    /// The live consent of `userID` for `clientID`'s app group.
    func consent(userID: String, clientID: String) -> Consent? {
        guard let entry = clients.entry(clientID) else { return nil }
        return owner.read { world, _ in world.consents[Consent.Key(teamID: entry.team.teamID, groupID: entry.groupID, userID: userID)] }
    }

    /// Codes issued and not yet redeemed (expired ones linger until the next mock second's look).
    var pendingCodeCount: Int { owner.read { world, _ in world.pendingCodes.count } }

    /// Why the state file's commits fail now; nil while they succeed (and without a state file).
    var commitFailure: CommitFailure? { owner.events.barrier.failure }

    /// The world as it stands, mock now in whole seconds, and how far the clock is from real time,
    /// read in one critical section, for the dashboard to render outside the lock. The copy shares
    /// the world's storage (copy-on-write): reading copies nothing.
    func snapshot() -> (world: World, now: Int64, offset: Double) {
        owner.readPrecisely { world, now, real in (world, Int64(seconds: now), now - real) }
    }

    /// The record of events and its readers (the feed, the dashboard, the deliverer, the writer).
    var events: EventStream { owner.events }
}
