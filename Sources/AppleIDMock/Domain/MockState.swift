import Dispatch
import FoundationEssentials
import JOSE
import Synchronization

/// The one owner of everything about the mock that changes (`World`): consents, pending codes,
/// transfers, users and their accounts, published keys and the signer, the clock, the token MAC
/// secret, the random stream. Every operation runs as one critical section with no suspension
/// inside: it decides events, which apply only when it succeeds (all or nothing), and are
/// recorded in sequence (the newest `eventCapacity` kept) for everything that reacts to them —
/// the notification deliverer, the event feed — each reading at its own cursor. Slow work —
/// signing, generating RSA keys — happens outside, before or after.
public final class MockState: Sendable {
    /// An event with its place in the sequence of all events.
    public struct RecordedEvent: Sendable, Equatable {
        /// 1, 2, 3, … since start (not reset by a reset).
        public var sequence: UInt64
        /// Mock time just after the operation that caused it, with fractions.
        public var at: Double
        /// What happened.
        public var event: DomainEvent
    }

    private struct Guarded {
        var world: World
        var log: EventLog
        /// The latest real time an operation ran at: mock time never runs backwards from one
        /// operation to the next unless the clock is moved back.
        var lastReal: Double
        /// Expired codes are looked for at most once per mock second.
        var lastPrune: Int64 = .min
        /// With a state file: events recorded and not yet handed to its writer.
        var unwritten: [RecordedEvent] = []
    }

    /// With a state file: changes counted (events recorded, notification log changes) and how
    /// many of them are committed; the answers waiting for a count to be committed; the key set
    /// `/auth/keys` serves once the change that made it is committed.
    private struct Durability {
        var changes: UInt64 = 0
        var committed: UInt64 = 0
        /// Answers waiting for a count to be committed: resumed true when it is, false when a
        /// commit fails first.
        var waiters: [(through: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var pendingJWKs: (through: UInt64, keys: PublishedKeys)?
        var writerWakeup: DispatchSemaphore?
        /// Why the writer's last commit failed; nil once one succeeds.
        var failure: String?
    }

    /// What `/auth/keys` serves and health names: the published keys' JWK fragments and the kid
    /// that signs, as of the last commit (with a state file).
    private struct PublishedKeys {
        var fragments: [[UInt8]]
        var signingKeyID: String?
    }

    /// How many recent events are kept.
    public static let eventCapacity = 10_000

    private let guarded: Mutex<Guarded>
    /// The published keys' JWK fragments, copied out of the world whenever an operation changes
    /// them: `/auth/keys`, the hottest route, reads them without taking the world's lock or the
    /// clock. Lock order: `guarded`, then `durability`, then this.
    private let publishedJWKs: Mutex<PublishedKeys>
    /// With `--seed`: the stream `/auth/keys` draws its order from, in request order.
    private let keyOrder: Mutex<SeededRandom?>
    private let seededOrder: Bool
    private let context: DomainContext
    private let realTime: @Sendable () -> Double
    /// Whether a state file's writer takes the recorded events (`takeUnwritten`), and answers
    /// wait for their commit (`awaitCommitted`).
    let persisting: Bool
    private let durability: Mutex<Durability>
    /// How this state began: what a state file stores first, to apply its events to.
    let genesis: StateGenesis

    /// The state at start: the scenario's initial state — or, with `restored`, the state a state
    /// file held (its genesis, then its events replayed, its seeded stream's position). With
    /// `persisting`, recorded events wait for a state file's writer.
    init(context: DomainContext, realTime: @escaping @Sendable () -> Double, random: RandomSource, restored: StoredState? = nil,
         persisting: Bool = false) {
        self.context = context
        self.realTime = realTime
        self.persisting = persisting
        var random = random.resolved()
        let secret = random.bytes(32)
        var order = random.derived("jwks order")
        // A seeded run's key orders go on where they stood at the last commit: the same seed's
        // stream only (another seed's, or an unseeded run's fresh one, begins at its start).
        if let fresh = order, let position = restored?.keyOrder, position.key == fresh.position.key,
           let stream = SeededRandom(position: position) {
            order = stream
        }
        seededOrder = order != nil
        keyOrder = Mutex(order)
        let real = realTime()
        let clock = MockClock(context.scenario.clock, real: real)
        let ring = context.ring
        var genesis = StateGenesis(secret: secret, clock: clock, start: clock.seconds(real: real), keys: ring.keys, activeKeyID: ring.activeKey.keyID)
        var log = EventLog(capacity: Self.eventCapacity)
        if let restored {
            genesis = restored.genesis
            // A seeded run goes on where its stream stood; an unseeded one draws from fresh entropy.
            if let position = restored.random, let stream = RandomSource(position: position) { random = stream }
            log = EventLog(capacity: Self.eventCapacity, restoring: restored.events)
        }
        self.genesis = genesis
        var world = World(context: context, clock: genesis.clock, now: genesis.start, secret: genesis.secret, firstConsentID: 1, random: random)
        if let restored {
            for recorded in restored.events { world.apply(recorded.event) }
            world.random = random
        }
        durability = Mutex(Durability())
        guarded = Mutex(Guarded(world: world, log: log, lastReal: real))
        publishedJWKs = Mutex(PublishedKeys(fragments: world.publishedJWKs, signingKeyID: world.signingKey?.keyID))
    }

    /// Runs `operation` as one critical section at mock time now: the scenario's timeline fires
    /// first, as the clock passed it; then the operation decides its events, which apply and are
    /// recorded only when it returns (a throw changes nothing and draws nothing). Returns its
    /// result and the events recorded in this critical section, timeline ones included.
    @discardableResult
    func perform<T, E: Error>(_ operation: (World, Int64, inout WorldChanges) throws(E) -> T) throws(E) -> (T, [RecordedEvent]) {
        let readReal = realTime()
        let (outcome, recorded, fromTime) = guarded.withLock { guarded in
            let real = max(readReal, guarded.lastReal)
            guarded.lastReal = real
            let keysRevision = guarded.world.keysRevision
            var recorded: [RecordedEvent] = []
            housekeeping(&guarded, real: real, into: &recorded)
            let fromTime = recorded.count
            var changes = WorldChanges(guarded.world)
            changes.preciseNow = guarded.world.clock.now(real: real)
            changes.real = real
            let outcome: Result<T, E>
            do throws(E) {
                let clockBefore = guarded.world.clock
                let result = try operation(guarded.world, guarded.world.clock.seconds(real: real), &changes)
                commit(&guarded, changes, real: real, into: &recorded)
                // The clock moved: what its new time brings (timeline, expiry) belongs to this operation.
                if guarded.world.clock != clockBefore { housekeeping(&guarded, real: real, into: &recorded) }
                outcome = .success(result)
            } catch {
                outcome = .failure(error)
            }
            if guarded.world.keysRevision != keysRevision {
                let keys = PublishedKeys(fragments: guarded.world.publishedJWKs, signingKeyID: guarded.world.signingKey?.keyID)
                if persisting {
                    // With a state file, /auth/keys serves a key (and health names a signer) only
                    // once its change is committed.
                    durability.withLock { $0.pendingJWKs = ($0.changes, keys) }
                } else {
                    publishedJWKs.withLock { $0 = keys }
                }
            }
            return (outcome, recorded, fromTime)
        }
        // The request journal links a request to the events its operation recorded.
        if recorded.count > fromTime, let collector = EventCollector.current { collector.add(recorded[fromTime...].lazy.map(\.sequence)) }
        if !recorded.isEmpty {
            feedReaders.wake()
            for listener in listeners.withLock({ $0 }) { listener.call() }
        }
        return (try outcome.get(), recorded)
    }

    /// Applies `changes` and records their events at mock time now.
    private func commit(_ guarded: inout Guarded, _ changes: WorldChanges, real: Double, into recorded: inout [RecordedEvent]) {
        for event in changes.events { guarded.world.apply(event) }
        guarded.world.random = changes.random
        let at = guarded.world.clock.now(real: real)
        for event in changes.events { recorded.append(guarded.log.append(event, at: at)) }
        if persisting && !changes.events.isEmpty {
            guarded.unwritten.append(contentsOf: recorded.suffix(changes.events.count))
            durability.withLock { $0.changes &+= UInt64(changes.events.count) }
        }
    }

    /// What the passing of time does before any operation: the scenario's timeline events whose
    /// time has come fire in order (each its own all-or-nothing step), and expired codes go.
    private func housekeeping(_ guarded: inout Guarded, real: Double, into recorded: inout [RecordedEvent]) {
        let now = guarded.world.clock.seconds(real: real)
        while true {
            var changes = WorldChanges(guarded.world)
            changes.preciseNow = guarded.world.clock.now(real: real)
            guard guarded.world.nextTimelineEvent(now: now, &changes) else { break }
            commit(&guarded, changes, real: real, into: &recorded)
        }
        if now != guarded.lastPrune {
            guarded.lastPrune = now
            if let expired = guarded.world.expiredCodes(now: now) {
                var changes = WorldChanges(guarded.world)
                changes.emit(expired)
                commit(&guarded, changes, real: real, into: &recorded)
            }
        }
    }

    /// Applies `events` as they are, in one critical section: what a replay of a recorded run (or
    /// a saved state) does. Nothing is decided, drawn or recorded.
    func replay(_ events: [DomainEvent]) {
        guarded.withLock { guarded in
            for event in events { guarded.world.apply(event) }
            let keys = PublishedKeys(fragments: guarded.world.publishedJWKs, signingKeyID: guarded.world.signingKey?.keyID)
            publishedJWKs.withLock { $0 = keys }
        }
    }

    /// Runs `read` at mock time now without changing anything.
    func read<T>(_ read: (World, Int64) -> T) -> T {
        let readReal = realTime()
        return guarded.withLock { guarded in read(guarded.world, guarded.world.clock.seconds(real: max(readReal, guarded.lastReal))) }
    }

    // MARK: - State file

    /// The events recorded since the last call, for the state file's writer, with the seeded
    /// stream's position after them (nil for an unseeded run, which starts afresh).
    func takeUnwritten() -> (events: [RecordedEvent], random: SeededRandom.Position?) {
        guarded.withLock { guarded in
            let events = guarded.unwritten
            guarded.unwritten = []
            return (events, context.keySeed == nil || events.isEmpty ? nil : guarded.world.random.streamPosition)
        }
    }

    /// Where the seeded stream of `/auth/keys` orders stands (seeded runs only). The writer
    /// commits it with other changes and at stop: the hot route itself writes nothing.
    var keyOrderPosition: SeededRandom.Position? {
        guard context.keySeed != nil else { return nil }
        return keyOrder.withLock { $0?.position }
    }

    /// Counts a change the state file's writer takes from elsewhere (the notification log)
    /// and wakes the writer: answers from now on wait for its commit too.
    func noteUncommittedChange() {
        guard persisting else { return }
        let wakeup = durability.withLock { durability -> DispatchSemaphore? in
            durability.changes &+= 1
            return durability.writerWakeup
        }
        wakeup?.signal()
    }

    /// The writer's wakeup for changes that record no event.
    func setWriterWakeup(_ wakeup: DispatchSemaphore) {
        durability.withLock { $0.writerWakeup = wakeup }
    }

    /// How many changes have been counted: read before taking them, it is what a commit of
    /// everything taken covers.
    var countedChanges: UInt64 { durability.withLock { $0.changes } }

    /// Marks the first `count` changes committed: `/auth/keys` takes up the key set they made,
    /// then the answers waiting for them go. A commit succeeded: the state file is writable again.
    func markCommitted(upTo count: UInt64) {
        let ready = durability.withLock { durability -> [CheckedContinuation<Bool, Never>] in
            durability.committed = max(durability.committed, count)
            durability.failure = nil
            let committed = durability.committed
            if let pending = durability.pendingJWKs, pending.through <= committed {
                publishedJWKs.withLock { $0 = pending.keys }
                durability.pendingJWKs = nil
            }
            let ready = durability.waiters.filter { $0.through <= committed }.map(\.continuation)
            if !ready.isEmpty { durability.waiters.removeAll { $0.through <= committed } }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// A commit failed for `reason` (`not writable (disk full)`): every answer waiting for one
    /// is told now, and later ones that depend on an uncommitted change are told at once, until
    /// a commit succeeds (`markCommitted`). The changes stay, to be committed then.
    func markCommitFailed(_ reason: String) {
        let waiting = durability.withLock { durability -> [CheckedContinuation<Bool, Never>] in
            durability.failure = reason
            defer { durability.waiters.removeAll() }
            return durability.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    /// Why the state file's commits fail now; nil while they succeed (and without a state file).
    public var commitFailure: CommitFailure? {
        durability.withLock { $0.failure }.map(CommitFailure.init)
    }

    /// The kid that signs as of the last commit (now, without a state file): what health names
    /// without waiting for the writer.
    public var committedSigningKeyID: String? { publishedJWKs.withLock { $0.signingKeyID } }

    /// With a state file: returns once every change counted so far is committed to it, so an
    /// answer that depends on an operation is sent only after its commit; throws at once while
    /// the file's commits fail (or when the commit waited for fails). At once otherwise.
    public func awaitCommitted() async throws(CommitFailure) {
        guard persisting else { return }
        let (target, failure) = durability.withLock { ($0.changes, $0.committed < $0.changes ? $0.failure : nil) }
        if let failure { throw CommitFailure(reason: failure) }
        guard durability.withLock({ $0.committed < target }) else { return }
        let committed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiting = durability.withLock { durability -> Bool in
                guard durability.committed < target, durability.failure == nil else { return false }
                durability.waiters.append((target, continuation))
                return true
            }
            if !waiting { continuation.resume(returning: durability.withLock { $0.committed >= target }) }
        }
        guard committed else { throw CommitFailure(reason: durability.withLock { $0.failure } ?? "not writable") }
    }

    // MARK: - Events

    /// The functions told (outside the lock) that events were recorded.
    private let listeners = Mutex<[EventListener]>([])
    /// Feed readers asleep until the next event.
    private let feedReaders = WakeList()

    /// Registers `listener`, called after every operation that recorded events; it reads them
    /// with `events(after:)` at its own cursor, so a slow one never blocks an operation.
    public func subscribe(_ listener: @escaping @Sendable () -> Void) {
        let box = EventListener(listener)
        listeners.withLock { $0.append(box) }
    }

    /// The kept events after `after` of the types in `types` (all when nil), oldest first, at
    /// most `limit`; and how many after `after` are no longer kept.
    public func events(after: UInt64 = 0, limit: Int = .max, types: Set<String>? = nil) -> (events: [RecordedEvent], missed: UInt64) {
        guarded.withLock { guarded in
            guarded.log.page(after: after, limit: limit) { types?.contains($0.name) ?? true }
        }
    }

    /// The newest event's sequence number (0 before the first).
    public var lastEventSequence: UInt64 { guarded.withLock { $0.log.lastSequence } }

    /// Waits up to `seconds` for an event after `after` of `types`; returns what `events` would.
    /// A reader sleeps until an event is recorded or its time is up, never polling.
    public func awaitEvents(after: UInt64, limit: Int, types: Set<String>?, seconds: Double) async -> (events: [RecordedEvent], missed: UInt64) {
        let deadline = realTime() + seconds
        while true {
            let seen = lastEventSequence
            let page = events(after: after, limit: limit, types: types)
            let left = deadline - realTime()
            if !page.events.isEmpty || page.missed > 0 || left <= 0 || Task.isCancelled || feedReaders.isReleased { return page }
            await feedReaders.sleep(seconds: left) { lastEventSequence != seen }
        }
    }

    /// Wakes every feed reader asleep in `awaitEvents`, and answers later ones at once: a mock
    /// that stops does not hold its shutdown for long polls.
    public func releaseReaders() {
        feedReaders.release()
    }

    /// Feed readers asleep now.
    var waitingReaders: Int { feedReaders.count }

    /// The key that signs id_tokens now, which signs notifications too (§7).
    public var signingKey: KeyRing.SigningKey? { read { world, _ in world.signingKey } }

    /// Applies an account event (§7); returns the sequence numbers of the account events Apple
    /// tells app groups about (each one notification), so the caller finds its own records in
    /// the delivery log whatever else happens at the same time (probe N3).
    @discardableResult
    public func accountEvent(_ type: AccountEventType, user: String, clientID: String) throws(AccountEventError) -> [UInt64] {
        guard let entry = context.clients.entry(clientID) else {
            throw AccountEventError(.unknown, message: "no client \"\(clientID)\" in the scenario", field: "client_id")
        }
        return try perform { world, now, changes throws(AccountEventError) in
            guard let (userID, _) = world.resolveUser(user) else { throw AccountEventError(.unknown, message: "no user \"\(user)\"", field: "user") }
            try world.accountEvent(type, userID: userID, entry: entry, now: now, &changes)
        }.1.compactMap { recorded in
            guard case .accountEvent(let record) = recorded.event, record.timelineIndex == nil else { return nil }
            return recorded.sequence
        }
    }

    // MARK: - Clock

    /// Mock now in whole seconds.
    public var now: Int64 { read { _, now in now } }

    /// The clock as it stands.
    public var clock: MockClock { read { world, _ in world.clock } }

    /// Mock now with fractions.
    public var preciseNow: Double {
        let readReal = realTime()
        return guarded.withLock { $0.world.clock.now(real: max(readReal, $0.lastReal)) }
    }

    /// Seconds the mock clock is ahead of real time (behind when negative).
    public var offsetFromRealTime: Double {
        let real = realTime()
        return guarded.withLock { $0.world.clock.now(real: max(real, $0.lastReal)) } - real
    }

    /// Moves, sets or freezes the clock, and the key rotation pattern with it.
    @discardableResult
    public func moveClock(_ change: ClockChange) throws(MockClock.OutOfRange) -> [RecordedEvent] {
        try moveClock([change])
    }

    /// Why a clock move must be decided again: the keys it generated no longer fit.
    private enum ClockMoveRefusal: Error {
        case outOfRange(MockClock.OutOfRange)
        case keysChanged
    }

    /// Applies `changes` in order as one operation — all of them, or none when one leaves the
    /// clock's range — together with what the rotation pattern does at the new time: a request
    /// never sees the new time with the old signer. The keys the pattern needs are generated
    /// first, outside the lock; if another operation got in between, it is decided again.
    @discardableResult
    public func moveClock(_ changes: [ClockChange]) throws(MockClock.OutOfRange) -> [RecordedEvent] {
        for attempt in 0..<4 {
            let readReal = realTime()
            let needed = try guarded.withLock { guarded throws(MockClock.OutOfRange) -> (count: Int, ordinal: UInt64) in
                let real = max(readReal, guarded.lastReal)
                let clock = try Self.moved(guarded.world.clock, changes, real: real)
                return (guarded.world.scheduleNeeds(now: clock.seconds(real: real)), guarded.world.keysPublished)
            }
            let fresh = needed.count > 0 ? generateKeys(needed.count, ordinal: needed.ordinal) : []
            let lastTry = attempt == 3
            do throws(ClockMoveRefusal) {
                return try perform { world, _, decided throws(ClockMoveRefusal) in
                    let clock: MockClock
                    do throws(MockClock.OutOfRange) {
                        clock = try Self.moved(world.clock, changes, real: decided.real)
                    } catch {
                        throw .outOfRange(error)
                    }
                    let now = clock.seconds(real: decided.real)
                    let stale = world.scheduleNeeds(now: now) > fresh.count || (context.keySeed != nil && world.keysPublished != needed.ordinal)
                    if stale && !lastTry { throw .keysChanged }
                    decided.emit(.clockChanged(clock: clock, now: now))
                    world.advanceSchedule(now: now, fresh: fresh, &decided)
                }.1
            } catch {
                if case .outOfRange(let error) = error { throw error }
            }
        }
        return []
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

    /// An operation that does nothing but let the scenario's timeline fire up to now.
    @discardableResult
    public func tick() -> [RecordedEvent] {
        perform { _, _, _ in }.1
    }

    /// A change to the clock.
    public enum ClockChange: Sendable, Equatable {
        /// Move by seconds (back when negative).
        case advance(Double)
        /// Go to an instant, seconds since 1970.
        case set(Double)
        /// Stand still, or run on.
        case freeze(Bool)
    }

    // MARK: - Keys

    /// Brings the keys to what the scenario's rotation pattern says now: generates the keys it
    /// needs outside the lock, then applies them in one critical section. The server calls it
    /// once a second for a running clock (a clock move applies the pattern itself).
    /// `stopping` cuts a long catch-up short (the server stops): by default the current task's
    /// cancellation.
    @discardableResult
    public func advanceKeySchedule(stopping: () -> Bool = { Task.isCancelled }) -> [RecordedEvent] {
        let (needed, ordinal, scheduled) = read { world, now in (world.scheduleNeeds(now: now), world.keysPublished, world.schedule != nil) }
        guard scheduled else { return [] }
        var fresh: [KeyRing.SigningKey] = []
        for index in 0..<needed {
            guard !stopping() else { return [] }
            guard let key = generateKeys(1, ordinal: ordinal + UInt64(index)).first else { break }
            fresh.append(key)
        }
        return perform { world, now, changes in
            // Under --seed a key is the nth key's; another operation took that place: the next call tries again.
            guard context.keySeed == nil || world.keysPublished == ordinal else { return }
            world.advanceSchedule(now: now, fresh: fresh, &changes)
        }.1
    }

    /// `count` fresh RSA-2048 keys, the first to be the `ordinal`th key published: under
    /// `--seed`, the same keys and kids in every run (derived from the seed and the ordinal);
    /// otherwise from OpenSSL's generator. Slow: never call it inside the lock.
    public func generateKeys(_ count: Int, ordinal: UInt64) -> [KeyRing.SigningKey] {
        (0..<count).compactMap { index in
            guard let seed = context.keySeed else { return try? KeyRing.generate() }
            let stream = seed.derived("key \(ordinal + UInt64(index))")
            var random = RandomSource(stream: stream.derived("kid"))
            var material = stream.derived("rsa")
            let keyID = random.alphanumeric(10)
            guard let privateKey = try? RSAPrivateKey.generate(bits: 2048, seed: material.bytes(32)) else { return nil }
            return KeyRing.SigningKey(keyID: keyID, privateKey: privateKey)
        }
    }

    /// The ordinal the next published key gets (what `generateKeys` needs).
    public var nextKeyOrdinal: UInt64 { read { world, _ in world.keysPublished } }

    /// Whether keys are derived from `--seed` (an operation must check the ordinal it generated for).
    var seedsKeys: Bool { context.keySeed != nil }

    /// Every key the mock has known, in publication order.
    public var keys: [KeyRecord] { read { world, _ in world.keys } }

    /// The `{"keys":[…]}` body of `/auth/keys`, in a random order when `shuffled` (Apple's order
    /// changes between fetches, §1.5); under `--seed`, the order comes from the seed.
    public func jwksBody(shuffled: Bool) -> [UInt8] {
        var fragments = publishedJWKs.withLock { $0.fragments }
        if shuffled {
            if seededOrder, let draws = keyOrder.withLock({ $0?.bytes(fragments.count * 4) }) {
                // Fisher–Yates on the seeded draws (4 bytes each; the modulo bias is immaterial here).
                for index in stride(from: fragments.count - 1, to: 0, by: -1) {
                    let draw = draws[index * 4..<index * 4 + 4].reduce(0) { $0 << 8 | Int($1) }
                    fragments.swapAt(index, draw % (index + 1))
                }
            } else {
                fragments.shuffle()
            }
        }
        var body: [UInt8] = Array(#"{"keys":["#.utf8)
        body.reserveCapacity(16 + fragments.reduce(0) { $0 + $1.count + 1 })
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: fragment)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// The published public key with `kid`.
    public func publicKey(keyID: String) -> RSAPublicKey? {
        read { world, _ in world.publishedKey(keyID)?.privateKey.publicKey }
    }

    /// The key that signs now.
    public var signingKeyID: String? { read { world, _ in world.signingKey?.keyID } }

    /// The published key with `kid`, private half included (to sign what it was chosen for).
    public func publishedKey(_ keyID: String) -> KeyRing.SigningKey? {
        read { world, _ in world.publishedKey(keyID) }
    }

    // MARK: - Everything else

    /// Returns everything to the scenario's initial state: users, consents, codes, transfers,
    /// keys, clock. The MAC secret is new, so no code or token from before works after.
    @discardableResult
    public func reset() -> [RecordedEvent] {
        perform { world, _, changes in
            let clock = MockClock(context.scenario.clock, real: changes.real)
            changes.emit(.reset(ResetRecord(clock: clock, now: clock.seconds(real: changes.real), secret: changes.random.bytes(32),
                                            firstConsentID: world.nextConsentID)))
        }.1
    }

    /// Ends every live consent of `userID` (in `teamID` only, when given) as `who`, sending no
    /// notification; returns how many.
    @discardableResult
    public func revokeConsents(userID: String, teamID: String? = nil, by who: Consent.Revocation) -> Int {
        perform { world, _, changes in
            let endings = world.consentEndings(userID: userID, teamID: teamID, by: who)
            for ending in endings { changes.emit(ending) }
            return endings.count
        }.0
    }

    /// Codes issued and not yet redeemed (expired ones linger until the next mock second's look).
    public var pendingCodeCount: Int { read { world, _ in world.pendingCodes.count } }

    /// Live consents.
    public var consentCount: Int { read { world, _ in world.consents.count } }

    /// The live consent of `userID` for `clientID`'s app group.
    public func consent(userID: String, clientID: String) -> Consent? {
        guard let entry = context.clients.entry(clientID) else { return nil }
        return read { world, _ in world.consents[Consent.Key(teamID: entry.team.teamID, groupID: entry.groupID, userID: userID)] }
    }

    /// Every user in order, with their account state.
    public var users: [UserAccount] { read { world, _ in world.userOrder.compactMap { world.users[$0] } } }

    /// The user with this id.
    public func user(_ userID: String) -> UserAccount? { read { world, _ in world.users[userID] } }
}
