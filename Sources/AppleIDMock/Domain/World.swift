import JOSE

/// Everything about the mock that changes: consents, pending codes, transfers, users and their
/// account state, the published keys and the signer, the clock, the token MAC secret, the
/// random stream. Only `StateOwner` holds one, behind one lock. An operation is a non-mutating
/// method here that reads the world and decides `DomainEvent`s (into `WorldChanges`); the state
/// owner applies them with `apply`, the only code that changes a world, and only when the
/// operation succeeds, so a refused operation changes nothing, and the scenario plus the events
/// rebuild the same world.
struct World: Sendable {
    /// What never changes while the mock runs.
    let context: DomainContext
    /// The mock clock.
    var clock: MockClock
    /// Mints and reads codes and tokens; its secret is replaced on reset.
    var codec: TokenCodec
    /// Where every draw comes from (codes, tokens, ids): a seeded stream, advanced only by
    /// operations that succeed, in the order they run.
    var random: RandomSource

    /// Users by id, and their order (scenario users first, then runtime users as added).
    var users: [String: UserAccount] = [:]
    var userOrder: [String] = []
    /// Users by `sub` and by relay address in every team (scenario users come from the context).
    var userIndex: UserIndex

    /// Live consents, by key and by id; how ended ones ended, by id and by key.
    var consents: [Consent.Key: Consent] = [:]
    var consentKeys: [UInt32: Consent.Key] = [:]
    var revoked: [UInt32: Consent.Revocation] = [:]
    var endedConsents: [Consent.Key: Consent.Revocation] = [:]
    var nextConsentID: UInt32
    /// The keys of each user's live consents: what a user's account event, deletion or transfer
    /// reads, without a scan of every consent.
    var consentKeysOfUser: [String: Set<Consent.Key>] = [:]

    /// Codes issued and not yet redeemed; expired ones are dropped at most once per mock second.
    var pendingCodes = PendingCodes()

    /// Team transfers by `transfer_sub`.
    var transfers: [String: TransferRecord] = [:]
    /// The `transfer_sub`s of each user's transfers: what every grant reads (`liveTransfer`).
    var transfersOfUser: [String: Set<String>] = [:]

    /// Every key the mock has known, in the order they were published, and the one that signs.
    var keys: [KeyRecord] = [] { didSet { keysRevision &+= 1 } }
    /// Counts changes to `keys`, carried across a reset: `/auth/keys`' copy of the published keys
    /// is refreshed when it moves.
    var keysRevision: UInt64 = 0
    /// Keys published since start (carried across a reset): the ordinal of the next generated
    /// key, from which `--seed` derives it.
    var keysPublished: UInt64 = 0
    var activeKeyID: String
    /// The key retired last, private half included: what `retired-key` forgeries sign with.
    var lastRetiredKey: KeyRing.SigningKey?
    /// Apple's rotation pattern on the mock clock, when the scenario sets one.
    var schedule: KeySchedule?

    /// The faults installed now, with their counts and the stream their probabilities draw from.
    var faults: FaultTable

    /// Each refresh token's refreshes within the last mock day it was refreshed on, counted
    /// only while the knob `refresh_throttle` is set (§9).
    var refreshCounts: [RefreshCount.Token: RefreshCount] = [:]

    /// Mock time the state began at (start or reset): the scenario timeline counts from it.
    let start: Int64
    /// The next scenario timeline event to fire.
    var nextTimelineEvent = 0

    /// The scenario's initial state at mock time `now`.
    init(context: DomainContext, clock: MockClock, now: Int64, secret: [UInt8], firstConsentID: UInt32, random: RandomSource,
         faultRandom: SeededRandom) {
        self.context = context
        self.clock = clock
        self.random = random
        start = now
        codec = TokenCodec(secret: secret)
        nextConsentID = firstConsentID
        // The scenario's faults, from f1.
        faults = FaultTable(scenario: context.scenario.faults, now: now, random: faultRandom)
        // Runtime users only: the scenario's are in `context.scenarioUserIndex`, made once per mock.
        userIndex = UserIndex()
        for user in context.scenario.users where users[user.id] == nil {
            users[user.id] = UserAccount(user: user)
            userOrder.append(user.id)
        }
        let ring = context.ring
        for key in ring.keys { keys.append(KeyRecord(key: key, publishedAt: now, activatedAt: key.keyID == ring.activeKey.keyID ? now : nil)) }
        activeKeyID = ring.activeKey.keyID
        if let rotation = context.scenario.signingKeys.rotation {
            schedule = KeySchedule(rotation: rotation, start: now, initialKeys: ring.keys.map(\.keyID), activeKeyID: ring.activeKey.keyID)
        }
    }

    // MARK: - Reads every operation shares

    /// The live account of `userID`.
    func account(_ userID: String) -> UserAccount? { users[userID] }

    /// The live consent with this id.
    func consent(id: UInt32) -> (key: Consent.Key, consent: Consent)? {
        guard let key = consentKeys[id], let consent = consents[key], consent.id == id else { return nil }
        return (key, consent)
    }

    /// The key that signs now. The active id always names a published key (retiring it is
    /// refused), so the fallback to the newest published key never runs.
    var signingKey: KeyRing.SigningKey? {
        if let record = keys.first(where: { $0.key?.keyID == activeKeyID && $0.state == .active }) { return record.key }
        return keys.last { $0.state != .retired }?.key
    }

    /// The address Apple shows the app: the real one, or the team's relay address (§6).
    func email(for user: Scenario.User, team teamID: String, hidden: Bool) -> String {
        hidden ? Identity.relayAddress(teamID: teamID, user: user) : user.email
    }

    /// The relay address of the user with this id in the team (on the scenario's relay domain
    /// for an id the mock does not know, which no caller passes).
    func relayAddress(teamID: String, userID: String) -> String {
        Identity.relayAddress(teamID: teamID, userID: userID, domain: users[userID]?.user.relayDomain ?? context.scenario.compatibility.relayDomain)
    }

    /// The live transfer of `userID` into `toTeam`, if any (§8: 60 days).
    func liveTransfer(userID: String, toTeam: String, now: Int64) -> TransferRecord? {
        let window = Int64(context.scenario.lifetimes.transferWindow)
        guard let subjects = transfersOfUser[userID] else { return nil }
        return subjects.lazy.compactMap { transfers[$0] }.filter { $0.toTeam == toTeam && now < $0.createdAt + window }
            .min { $0.transferSubject < $1.transferSubject }
    }

    /// Claims every id_token for this user and client carries: identity, email, transfer.
    func identityClaims(for entry: ClientDirectory.Entry, user: Scenario.User, scopes: Set<String>, hideEmail: Bool, isFirst: Bool,
                        now: Int64) -> IdentityTokenClaims {
        let scenario = context.scenario
        var claims = IdentityTokenClaims(issuer: context.issuer, audience: entry.client.clientID,
                                         subject: Identity.subject(teamID: entry.team.teamID, userID: user.id),
                                         issuedAt: now, expiresAt: now + Int64(scenario.lifetimes.idToken))
        if scopes.contains("email") && !user.managed && (isFirst || scenario.compatibility.emailOnLaterLogins) {
            claims.email = email(for: user, team: entry.team.teamID, hidden: hideEmail)
            claims.omitsPrivateEmail = user.omitsPrivateEmail
            claims.emailIsPrivate = hideEmail
        }
        if let transfer = liveTransfer(userID: user.id, toTeam: entry.team.teamID, now: now) {
            claims.transferSubject = transfer.transferSubject
        }
        return claims
    }

    /// A token drawn from the operation's stream; refused for a time the format cannot carry
    /// (the clock keeps within `MockClock.representable`, so callers answer 400 or 503 for it).
    func encode(_ kind: TokenCodec.Kind, consentID: UInt32, client: ClientDirectory.Entry, now: Int64,
                _ changes: inout WorldChanges) throws(TokenCodec.TimeOutOfRange) -> String {
        try codec.encode(.init(kind: kind, consentID: consentID, clientTag: client.tag, issuedAt: now), random: &changes.random)
    }
}

