/// A change to the mock's state, carrying its whole effect: `World.apply` is the only code that
/// changes a `World`, and it reads nothing but the event, so the scenario's initial state plus
/// the recorded events rebuild the same `World` (a replay). Operations decide events without
/// changing anything; the state owner applies them only when the operation succeeds (all or
/// nothing). Everything that reacts — notifications, the event feed — reads events.
package enum DomainEvent: Sendable, Equatable {
    /// A user authorized an app group for the first time (or again after a revocation).
    case consentGranted(ConsentGrant)
    /// A consent ended: by the app (`/auth/revoke`) or by the user.
    case consentRevoked(userID: String, teamID: String, groupID: String, consentID: UInt32, by: Consent.Revocation)
    /// An authorization code was issued (web or native sign-in).
    case codeIssued(code: String, grant: AuthorizationGrant)
    /// A code was exchanged at `/auth/token` (it works once).
    case codeRedeemed(code: String, clientID: String, userID: String, consentID: UInt32)
    /// Codes that expired by `at` were dropped (they answer `invalid_grant` as before).
    case codesExpired(at: Int64, count: Int)
    /// `/auth/token` issued tokens: `authorization_code`, `refresh_token` or `client_credentials`.
    case tokensIssued(grantType: String, clientID: String, userID: String?, consentID: UInt32)
    /// A refresh was counted against the knob `refresh_throttle` (only while it is set).
    case refreshCounted(RefreshCount)
    /// A signing key appeared at `/auth/keys`; `step` is its place in the rotation pattern.
    case keyPublished(key: KeyRing.SigningKey, at: Int64, step: Int64?)
    /// A key began signing new tokens.
    case keyActivated(kid: String, at: Int64)
    /// A key left `/auth/keys`; what it signed no longer verifies.
    case keyRetired(kid: String, at: Int64, step: Int64?)
    /// The rotation pattern was applied up to `at` (moving the clock back does not undo it).
    case keyScheduleAdvanced(at: Int64)
    /// The clock was moved, set, frozen or let run; `now` is mock time after the change.
    case clockChanged(clock: MockClock, now: Int64)
    /// A user was added at runtime.
    case userAdded(AddedUser)
    /// A team transfer began for a user (`/auth/usermigrationinfo`).
    case transferStarted(TransferRecord)
    /// A user's Apple Account was deleted: no sign-in anywhere, no relay mail in any team.
    case accountDeleted(userID: String)
    /// Relay mail forwarding of a user's address in a team went off or on.
    case relayForwardingChanged(userID: String, teamID: String, enabled: Bool)
    /// The user changed their Apple Account password: each consent lives on under a new id, so
    /// the refresh tokens of every app die, silently (§9).
    case passwordChanged(userID: String, renewals: [ConsentRenewal])
    /// Apple told an app group about an account event (§7): the notification's source.
    case accountEvent(AccountEventRecord)
    /// A scenario timeline event could not happen (its index and why).
    case timelineEventRefused(index: Int, message: String)
    /// Everything went back to the scenario's initial state, with a new token MAC secret.
    case reset(ResetRecord)
    /// An injected fault acted on a request or a notification; it carries the fault's counts after.
    case faultFired(FaultFiring)
    /// Faults were installed (one, or an incident's), numbered on from the last.
    case faultsInstalled([InstalledFault])
    /// Faults were removed.
    case faultsRemoved(ids: [String])
    /// The notification deliverer did something to the delivery log: an attempt ended (a
    /// success, a retry to come, a give-up), the log was cleared, or a record was taken over from
    /// an older state file. It changes no `World`; the log is these events' projection.
    case delivery(DeliveryEvent)
}

/// A fault that fired: which, what it did, and to what.
package struct FaultFiring: Sendable, Equatable {
    /// The fault's id (`f1`, …).
    var faultID: String
    /// Its action's name (`respond`, `delay`, `drop`, …).
    package var action: String
    /// What it acted on: `POST /auth/token`, or `notification consent-revoked`.
    package var target: String
    /// How often the fault had fired, this firing included.
    var fired: Int?
    /// Its firings left after this one, for a `times` fault.
    var remaining: Int?

    /// A firing, with the fault's counts after it (nil in a state file written before they were kept).
    init(faultID: String, action: String, target: String, fired: Int? = nil, remaining: Int? = nil) {
        self.faultID = faultID
        self.action = action
        self.target = target
        self.fired = fired
        self.remaining = remaining
    }
}

extension DomainEvent {
    /// Every kind of event, without its payload: its name in the feed, in `type=` filters and in
    /// the state file. `DomainEvent.kind`, the stored decoder and `compaction` switch over it
    /// exhaustively, so a new case of `DomainEvent` is a compile error until each says what to do
    /// with it, and the names list, the codec test's coverage and compaction's statements follow.
    package enum Kind: String, CaseIterable, Sendable {
        case consentGranted = "consent-granted"
        case consentRevoked = "consent-revoked"
        case codeIssued = "code-issued"
        case codeRedeemed = "code-redeemed"
        case codesExpired = "codes-expired"
        case tokensIssued = "tokens-issued"
        case refreshCounted = "refresh-counted"
        case keyPublished = "key-published"
        case keyActivated = "key-activated"
        case keyRetired = "key-retired"
        case keyScheduleAdvanced = "key-schedule-advanced"
        case clockChanged = "clock-changed"
        case userAdded = "user-added"
        case transferStarted = "transfer-started"
        case accountDeleted = "account-deleted"
        case relayForwardingChanged = "relay-forwarding-changed"
        case passwordChanged = "password-changed"
        case accountEvent = "account-event"
        case timelineEventRefused = "timeline-event-refused"
        case reset = "reset"
        case faultFired = "fault-fired"
        case faultsInstalled = "faults-installed"
        case faultsRemoved = "faults-removed"
        case notificationAttempted = "notification-attempted"
        case notificationsCleared = "notifications-cleared"
        case notificationImported = "notification-imported"

        /// What compaction does with an event of this kind once it is behind the cutoff
        /// (`StateFile.compactStep`).
        var compaction: Compaction {
            switch self {
            case .consentGranted: .kept
            case .consentRevoked: .kept
            case .codeIssued: .code
            case .codeRedeemed: .code
            case .codesExpired: .kept
            case .tokensIssued: .inert
            case .refreshCounted: .inertUnlessCounting
            case .keyPublished: .kept
            case .keyActivated: .kept
            case .keyRetired: .kept
            case .keyScheduleAdvanced: .kept
            case .clockChanged: .kept
            case .userAdded: .kept
            case .transferStarted: .kept
            case .accountDeleted: .kept
            case .relayForwardingChanged: .kept
            case .passwordChanged: .kept
            case .accountEvent: .kept
            case .timelineEventRefused: .kept
            case .reset: .kept
            case .faultFired: .inertUnlessCounting
            case .faultsInstalled: .kept
            case .faultsRemoved: .kept
            // Forgotten by notification id instead (`StateFile.forgetOldDeliveries`).
            case .notificationAttempted, .notificationsCleared, .notificationImported: .kept
            }
        }
    }

    /// How compaction treats an old event.
    enum Compaction: Sendable {
        /// Replaying needs it: it stays (consents, revocations, keys, users, the clock, …).
        case kept
        /// No later state needs it: it goes.
        case inert
        /// It goes unless it carries a count a later state needs (a `times` fault's firings).
        case inertUnlessCounting
        /// A code's issue goes with its redemption, or once a later `codes-expired` reached it.
        case code
    }

    /// The event's kind.
    package var kind: Kind {
        switch self {
        case .consentGranted: .consentGranted
        case .consentRevoked: .consentRevoked
        case .codeIssued: .codeIssued
        case .codeRedeemed: .codeRedeemed
        case .codesExpired: .codesExpired
        case .tokensIssued: .tokensIssued
        case .refreshCounted: .refreshCounted
        case .keyPublished: .keyPublished
        case .keyActivated: .keyActivated
        case .keyRetired: .keyRetired
        case .keyScheduleAdvanced: .keyScheduleAdvanced
        case .clockChanged: .clockChanged
        case .userAdded: .userAdded
        case .transferStarted: .transferStarted
        case .accountDeleted: .accountDeleted
        case .relayForwardingChanged: .relayForwardingChanged
        case .passwordChanged: .passwordChanged
        case .accountEvent: .accountEvent
        case .timelineEventRefused: .timelineEventRefused
        case .reset: .reset
        case .faultFired: .faultFired
        case .faultsInstalled: .faultsInstalled
        case .faultsRemoved: .faultsRemoved
        case .delivery(.attempted): .notificationAttempted
        case .delivery(.cleared): .notificationsCleared
        case .delivery(.imported): .notificationImported
        }
    }

    /// The event's name in the feed and in `type=` filters.
    package var name: String { kind.rawValue }

    /// Every event name, for messages and validation of `type=`.
    package static let names = Kind.allCases.map(\.rawValue)
}
