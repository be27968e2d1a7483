import FoundationEssentials
import JOSE
import Synchronization

/// The one owner of everything about the mock that changes (`World`): consents, pending codes,
/// transfers, users and their accounts, published keys and the signer, the clock, the faults,
/// the token MAC secret, the random streams. Every operation runs as one critical section with
/// no suspension inside: it decides events, which apply only when it succeeds (all or nothing)
/// and are recorded in `events`, in sequence, for everything that reacts to them. Slow work —
/// signing, generating RSA keys — happens outside, before or after. `AppleIDDomain` is its only
/// caller: the operations are its methods.
final class StateOwner: Sendable {
    private struct Guarded {
        var world: World
        /// The latest real time an operation ran at: mock time never runs backwards from one
        /// operation to the next unless the clock is moved back.
        var lastReal: Double
        /// Expired codes are looked for at most once per mock second.
        var lastPrune: Int64 = .min
    }

    private let guarded: Mutex<Guarded>
    /// The record of events, its readers, and (with a state file) the commit barrier.
    let events: EventStream
    /// What `/auth/keys` serves: refreshed by every operation that changes the keys.
    let publishedKeys: PublishedKeys
    let context: DomainContext
    let realTime: @Sendable () -> Double
    /// How this state began: what a state file stores first, to apply its events to.
    let genesis: StateGenesis

    /// The state at start: the scenario's initial state — or, with `restored`, the state a state
    /// file held (its genesis, then its events replayed, its seeded streams' positions). Events go
    /// to `events`, whose barrier holds answers when a state file is written.
    init(context: DomainContext, realTime: @escaping @Sendable () -> Double, random: RandomSource, restored: StoredState? = nil,
         barrier: CommitBarrier) {
        self.context = context
        self.realTime = realTime
        var random = random.resolved()
        let secret = random.bytes(32)
        var order = random.derived("jwks order")
        // A seeded run's key orders go on where they stood at the last commit: the same seed's
        // stream only (another seed's, or an unseeded run's fresh one, begins at its start).
        if let fresh = order, let position = restored?.keyOrder, position.key == fresh.position.key,
           let stream = SeededRandom(position: position) {
            order = stream
        }
        var faultRandom = context.faultSeed ?? SeededRandom(entropy: SecureRandom.bytes(32))
        if let fresh = context.faultSeed, let position = restored?.faultRandom, position.key == fresh.position.key,
           let stream = SeededRandom(position: position) {
            faultRandom = stream
        }
        let real = realTime()
        let clock = MockClock(context.scenario.clock, real: real)
        let ring = context.ring
        var genesis = StateGenesis(secret: secret, clock: clock, start: clock.seconds(real: real), keys: ring.keys, activeKeyID: ring.activeKey.keyID)
        if let restored {
            genesis = restored.genesis
            // A seeded run goes on where its stream stood; an unseeded one draws from fresh entropy.
            if let position = restored.random, let stream = RandomSource(position: position) { random = stream }
        }
        self.genesis = genesis
        var world = World(context: context, clock: genesis.clock, now: genesis.start, secret: genesis.secret, firstConsentID: 1, random: random,
                          faultRandom: faultRandom)
        if let restored {
            for recorded in restored.events { world.apply(recorded.event) }
            world.random = random
            world.faults.random = faultRandom
        }
        events = EventStream(barrier: barrier, restored: restored?.events ?? [])
        publishedKeys = PublishedKeys(initial: .init(fragments: world.publishedJWKs, signingKeyID: world.signingKey?.keyID), order: order)
        guarded = Mutex(Guarded(world: world, lastReal: real))
        // With a state file, a key set is served once the change that made it is committed.
        barrier.onCommitted { [publishedKeys] count in publishedKeys.committed(upTo: count) }
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
                // A key event changed the published keys: the new set, once its events are committed.
                publishedKeys.update(.init(fragments: guarded.world.publishedJWKs, signingKeyID: guarded.world.signingKey?.keyID),
                                     through: events.barrier.enabled ? events.barrier.counted : 0)
            }
            return (outcome, recorded, fromTime)
        }
        // The request journal links a request to the events its operation recorded.
        if recorded.count > fromTime, let collector = EventCollector.current { collector.add(recorded[fromTime...].lazy.map(\.sequence)) }
        if !recorded.isEmpty { events.announce() }
        return (try outcome.get(), recorded)
    }

    /// Applies `changes` and records their events at mock time now.
    private func commit(_ guarded: inout Guarded, _ changes: WorldChanges, real: Double, into recorded: inout [RecordedEvent]) {
        for event in changes.events { guarded.world.apply(event) }
        guarded.world.random = changes.random
        guarded.world.faults.random = changes.faultRandom
        recorded += events.append(changes.events, at: guarded.world.clock.now(real: real))
    }

    /// What the passing of time does before any operation: the scenario's timeline events whose
    /// time has come fire in order (each its own all-or-nothing step), expired codes go, and
    /// faults whose time is over end.
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
            for ended in [guarded.world.expiredCodes(now: now), guarded.world.endedFaults(now: now)].compactMap({ $0 }) {
                var changes = WorldChanges(guarded.world)
                changes.emit(ended)
                commit(&guarded, changes, real: real, into: &recorded)
            }
        }
    }

    /// Runs `read` at mock time now without changing anything.
    func read<T>(_ read: (World, Int64) -> T) -> T {
        let readReal = realTime()
        return guarded.withLock { guarded in read(guarded.world, guarded.world.clock.seconds(real: max(readReal, guarded.lastReal))) }
    }

    /// Runs `read` at mock time now with its fractions, and real time as the state sees it.
    func readPrecisely<T, E: Error>(_ read: (World, Double, Double) throws(E) -> T) throws(E) -> T {
        let readReal = realTime()
        return try guarded.withLock { guarded throws(E) in
            let real = max(readReal, guarded.lastReal)
            return try read(guarded.world, guarded.world.clock.now(real: real), real)
        }
    }

    /// What the state file's writer commits next: the events recorded since the last call, with where the seeded streams stand after them (seeded runs only) — taken
    /// in one critical section, so the positions are those after exactly these events.
    func takeUnwritten() -> StateBatch {
        guarded.withLock { guarded in
            let taken = events.takeUnwritten()
            var batch = StateBatch(events: taken)
            if context.keySeed != nil && !taken.isEmpty {
                batch.random = guarded.world.random.streamPosition
                if context.faultSeed != nil { batch.faultRandom = guarded.world.faults.random.position }
            }
            return batch
        }
    }
}
