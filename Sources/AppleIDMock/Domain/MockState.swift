import FoundationEssentials
import JOSE
import Synchronization

/// The one owner of everything about the mock that changes (`World`): consents, pending codes,
/// transfers, users and their accounts, published keys and the signer, the clock, the token MAC
/// secret. Every operation runs as one critical section with no suspension inside, and returns
/// its result; the events it caused are kept (the newest `eventCapacity`) for whoever reacts to
/// them. Slow work — signing, generating RSA keys — happens outside, before or after.
public final class MockState: Sendable {
    /// An event with its place in the sequence of all events.
    public struct RecordedEvent: Sendable, Equatable {
        /// 1, 2, 3, … since start (not reset by a reset).
        public var sequence: UInt64
        /// Mock time of the operation that caused it.
        public var at: Int64
        /// What happened.
        public var event: DomainEvent
    }

    private struct Guarded {
        var world: World
        var events: [RecordedEvent] = []
        var sequence: UInt64 = 0
    }

    /// How many recent events are kept.
    public static let eventCapacity = 1000

    private let guarded: Mutex<Guarded>
    /// The published keys' JWK fragments, copied out of the world whenever an operation changes
    /// them: `/auth/keys`, the hottest route, reads them without taking the world's lock or the
    /// clock. Lock order: `guarded`, then this.
    private let publishedJWKs: Mutex<[[UInt8]]>
    private let context: DomainContext
    private let ring: KeyRing
    private let realTime: @Sendable () -> Double

    init(context: DomainContext, ring: KeyRing, realTime: @escaping @Sendable () -> Double) {
        self.context = context
        self.ring = ring
        self.realTime = realTime
        let real = realTime()
        let clock = MockClock(context.scenario.clock, real: real)
        let world = World(context: context, ring: ring, clock: clock, now: clock.seconds(real: real),
                          secret: context.random.bytes(32), firstConsentID: 1)
        guarded = Mutex(Guarded(world: world))
        publishedJWKs = Mutex(world.publishedJWKs)
    }

    /// Runs `operation` as one critical section at mock time now, records its events, and
    /// returns its result with them.
    @discardableResult
    func perform<T, E: Error>(_ operation: (inout World, Int64) throws(E) -> T) throws(E) -> (T, [DomainEvent]) {
        let real = realTime()
        let (outcome, queued) = guarded.withLock { (guarded: inout Guarded) -> (Result<(T, [DomainEvent]), E>, Bool) in
            let now = guarded.world.clock.seconds(real: real)
            let keysRevision = guarded.world.keysRevision
            guarded.world.preciseNow = guarded.world.clock.now(real: real)
            guarded.world.pendingEvents = []
            // The scenario's timeline fires as the clock passes it, before anything else happens then;
            // its events stand even when the operation itself is refused.
            guarded.world.fireTimeline(now: now)
            let timelineEvents = guarded.world.pendingEvents
            let outcome: Result<(T, [DomainEvent]), E>
            do throws(E) {
                let result = try operation(&guarded.world, now)
                outcome = .success((result, guarded.world.pendingEvents))
            } catch {
                guarded.world.pendingEvents = timelineEvents
                outcome = .failure(error)
            }
            record(&guarded, guarded.world.pendingEvents, real: real)
            // Also after an operation that changed a key and then threw (none does today).
            if guarded.world.keysRevision != keysRevision {
                let fragments = guarded.world.publishedJWKs
                publishedJWKs.withLock { $0 = fragments }
            }
            guarded.world.pendingEvents = []
            return (outcome, !guarded.world.outbox.isEmpty || !guarded.world.droppedNotifications.isEmpty)
        }
        if queued { notifyOutbox() }
        return try outcome.get()
    }

    /// Keeps `events` in the recent-events log (a reset moves the clock: its events carry the new time).
    private func record(_ guarded: inout Guarded, _ events: [DomainEvent], real: Double) {
        let at = guarded.world.clock.seconds(real: real)
        for event in events {
            guarded.sequence += 1
            guarded.events.append(RecordedEvent(sequence: guarded.sequence, at: at, event: event))
        }
        if guarded.events.count > Self.eventCapacity { guarded.events.removeFirst(guarded.events.count - Self.eventCapacity) }
    }

    /// Runs `read` at mock time now without changing anything.
    func read<T>(_ read: (World, Int64) -> T) -> T {
        let real = realTime()
        return guarded.withLock { guarded in read(guarded.world, guarded.world.clock.seconds(real: real)) }
    }

    // MARK: - Notifications

    /// Called (outside the lock) after every operation; the deliverer uses it to wake up. Boxed
    /// in a class: a bare closure read out of a `Mutex` through `withLock { $0 }` is written
    /// back re-abstracted, two thunks deeper per read, until calling it overflows the stack
    /// (probe N1). A class reference comes out as it went in.
    private let outboxListener = Mutex<OutboxListener?>(nil)

    /// Registers the one function told that the outbox may hold notifications.
    public func onOutbox(_ listener: @escaping @Sendable () -> Void) {
        let box = OutboxListener(listener)
        outboxListener.withLock { $0 = box }
    }

    private func notifyOutbox() {
        outboxListener.withLock { $0 }?.call()
    }

    /// Takes every queued notification, and those that found the outbox full.
    public func takeOutbox() -> (queued: [PendingNotification], dropped: [PendingNotification], droppedUncounted: Int) {
        guarded.withLock { guarded in
            defer {
                guarded.world.outbox = []
                guarded.world.droppedNotifications = []
                guarded.world.droppedUncounted = 0
            }
            return (guarded.world.outbox, guarded.world.droppedNotifications, guarded.world.droppedUncounted)
        }
    }

    /// The key that signs id_tokens now, which signs notifications too (§7).
    public var signingKey: KeyRing.SigningKey? { read { world, _ in world.signingKey } }

    /// Applies an account event (§7) and queues its notification; returns the sequence numbers
    /// of the notifications this event queued (none when nothing is sent), so the caller finds
    /// its own records in the delivery log whatever else happens at the same time (probe N3).
    @discardableResult
    public func accountEvent(_ type: AccountEventType, user: String, clientID: String) throws(AccountEventError) -> [UInt64] {
        guard let entry = context.clients.entry(clientID) else {
            throw AccountEventError(status: 404, message: "no client \"\(clientID)\" in the scenario", field: "client_id")
        }
        return try perform { world, now throws(AccountEventError) in
            guard let (userID, _) = world.resolveUser(user) else { throw AccountEventError(status: 404, message: "no user \"\(user)\"", field: "user") }
            let before = world.notificationSequence
            try world.accountEvent(type, userID: userID, entry: entry, now: now)
            return before < world.notificationSequence ? Array((before + 1)...world.notificationSequence) : []
        }.0
    }

    // MARK: - Clock

    /// Mock now in whole seconds.
    public var now: Int64 { read { _, now in now } }

    /// The clock as it stands.
    public var clock: MockClock { read { world, _ in world.clock } }

    /// Mock now with fractions.
    public var preciseNow: Double {
        let real = realTime()
        return guarded.withLock { $0.world.clock.now(real: real) }
    }

    /// Seconds the mock clock is ahead of real time (behind when negative).
    public var offsetFromRealTime: Double {
        let real = realTime()
        return guarded.withLock { $0.world.clock.now(real: real) } - real
    }

    /// Moves, sets or freezes the clock, then lets the key rotation pattern catch up.
    @discardableResult
    public func moveClock(_ change: ClockChange) throws(MockClock.OutOfRange) -> [DomainEvent] {
        try moveClock([change])
    }

    /// Applies `changes` in order as one operation: all of them, or none when one leaves the
    /// clock's range.
    @discardableResult
    public func moveClock(_ changes: [ClockChange]) throws(MockClock.OutOfRange) -> [DomainEvent] {
        let real = realTime()
        var (_, events) = try perform { (world: inout World, _: Int64) throws(MockClock.OutOfRange) in
            var clock = world.clock
            for change in changes {
                switch change {
                case .advance(let seconds): try clock.advance(by: seconds, real: real)
                case .set(let instant): try clock.set(to: instant, real: real)
                case .freeze(let frozen): clock.setFrozen(frozen, real: real)
                }
            }
            world.clock = clock
            world.emit(.clockChanged(now: clock.seconds(real: real), frozen: clock.isFrozen))
        }
        events += tick()
        events += advanceKeySchedule()
        return events
    }

    /// An operation that does nothing but let the scenario's timeline fire up to now.
    @discardableResult
    public func tick() -> [DomainEvent] {
        perform { _, _ in }.1
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
    /// needs outside the lock, then applies them in one critical section. Call after moving the
    /// clock; the server also calls it once a second for a running clock.
    /// `stopping` cuts a long catch-up short (the server stops): by default the current task's
    /// cancellation.
    @discardableResult
    public func advanceKeySchedule(stopping: () -> Bool = { Task.isCancelled }) -> [DomainEvent] {
        let needed = read { world, now in world.scheduleNeeds(now: now) }
        guard read({ world, _ in world.schedule != nil }) else { return [] }
        var fresh: [KeyRing.SigningKey] = []
        for _ in 0..<needed {
            guard !stopping() else { return [] }
            guard let key = try? KeyRing.generate(random: context.random) else { break }
            fresh.append(key)
        }
        return perform { world, now in world.advanceSchedule(now: now, fresh: fresh) }.1
    }

    /// Every key the mock has known, in publication order.
    public var keys: [KeyRecord] { read { world, _ in world.keys } }

    /// The `{"keys":[…]}` body of `/auth/keys`, in a random order when `shuffled` (Apple's order
    /// changes between fetches, §1.5).
    public func jwksBody(shuffled: Bool) -> [UInt8] {
        var fragments = publishedJWKs.withLock { $0 }
        if shuffled { fragments.shuffle() }
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

    // MARK: - Everything else

    /// Returns everything to the scenario's initial state: users, consents, codes, transfers,
    /// keys, clock. The MAC secret is new, so no code or token from before works after.
    public func reset() {
        let real = realTime()
        perform { world, _ in
            let clock = MockClock(context.scenario.clock, real: real)
            let keysRevision = world.keysRevision
            let notificationSequence = world.notificationSequence
            world = World(context: context, ring: ring, clock: clock, now: clock.seconds(real: real),
                          secret: context.random.bytes(32), firstConsentID: world.nextConsentID)
            world.keysRevision = keysRevision &+ 1
            world.notificationSequence = notificationSequence
            world.emit(.reset)
        }
    }

    /// The newest events with a sequence number above `after`, oldest first.
    public func events(after: UInt64 = 0) -> [RecordedEvent] {
        guarded.withLock { $0.events.filter { $0.sequence > after } }
    }

    /// Drops expired codes now.
    public func pruneExpiredCodes() {
        perform { world, now in world.pruneCodes(now: now, force: true) }
    }

    /// Ends every live consent of `userID` (in `teamID` only, when given) as `who`; returns how many.
    @discardableResult
    public func revokeConsents(userID: String, teamID: String? = nil, by who: Consent.Revocation) -> Int {
        perform { world, _ in world.endConsents(userID: userID, teamID: teamID, by: who) }.0
    }

    /// Codes issued and not yet redeemed.
    public var pendingCodeCount: Int { read { world, _ in world.pendingCodeCount } }

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
