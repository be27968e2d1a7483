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
    }

    /// Runs `operation` as one critical section at mock time now, records its events, and
    /// returns its result with them.
    @discardableResult
    func perform<T, E: Error>(_ operation: (inout World, Int64) throws(E) -> T) throws(E) -> (T, [DomainEvent]) {
        let real = realTime()
        return try guarded.withLock { (guarded: inout Guarded) throws(E) -> (T, [DomainEvent]) in
            let now = guarded.world.clock.seconds(real: real)
            guarded.world.pendingEvents = []
            let result: T
            do throws(E) {
                result = try operation(&guarded.world, now)
            } catch {
                guarded.world.pendingEvents = []
                throw error
            }
            let events = guarded.world.pendingEvents
            guarded.world.pendingEvents = []
            // A reset moves the clock: its events carry the new time.
            let at = guarded.world.clock.seconds(real: real)
            for event in events {
                guarded.sequence += 1
                guarded.events.append(RecordedEvent(sequence: guarded.sequence, at: at, event: event))
            }
            if guarded.events.count > Self.eventCapacity { guarded.events.removeFirst(guarded.events.count - Self.eventCapacity) }
            return (result, events)
        }
    }

    /// Runs `read` at mock time now without changing anything.
    func read<T>(_ read: (World, Int64) -> T) -> T {
        let real = realTime()
        return guarded.withLock { guarded in read(guarded.world, guarded.world.clock.seconds(real: real)) }
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
        let real = realTime()
        var (_, events) = try perform { (world: inout World, _: Int64) throws(MockClock.OutOfRange) in
            switch change {
            case .advance(let seconds): try world.clock.advance(by: seconds, real: real)
            case .set(let instant): try world.clock.set(to: instant, real: real)
            case .freeze(let frozen): world.clock.setFrozen(frozen, real: real)
            }
            world.emit(.clockChanged(now: world.clock.seconds(real: real), frozen: world.clock.isFrozen))
        }
        events += advanceKeySchedule()
        return events
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
    @discardableResult
    public func advanceKeySchedule() -> [DomainEvent] {
        let needed = read { world, now in world.scheduleNeeds(now: now) }
        guard read({ world, _ in world.schedule != nil }) else { return [] }
        var fresh: [KeyRing.SigningKey] = []
        for _ in 0..<needed {
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
        var fragments = read { world, _ in world.publishedJWKs }
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
            world = World(context: context, ring: ring, clock: clock, now: clock.seconds(real: real),
                          secret: context.random.bytes(32), firstConsentID: world.nextConsentID)
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
