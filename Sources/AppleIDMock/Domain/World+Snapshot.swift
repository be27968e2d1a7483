import JOSE

extension World {
    /// Everything a world holds that an operation can change, as one comparable value: two
    /// worlds with equal snapshots answer every request alike (the replay test compares them).
    /// The random stream is left out: it says what comes next, not what happened.
    struct Snapshot: Equatable {
        var clock: MockClock
        var macFingerprint: [UInt8]
        var users: [String: UserAccount]
        var userOrder: [String]
        var consents: [Consent.Key: Consent]
        var consentKeys: [UInt32: Consent.Key]
        var revoked: [UInt32: Consent.Revocation]
        var endedConsents: [Consent.Key: Consent.Revocation]
        var nextConsentID: UInt32
        var pendingCodes: [String: AuthorizationGrant]
        var transfers: [String: TransferRecord]
        var keys: [String]
        var activeKeyID: String
        var keysPublished: UInt64
        var scheduleKeyIDs: [Int64: String]?
        var scheduleHorizon: Int64?
        var start: Int64
        var nextTimelineEvent: Int
        var refreshCounts: [RefreshCount.Token: RefreshCount]
    }

    /// This world's snapshot.
    var snapshot: Snapshot {
        Snapshot(clock: clock, macFingerprint: codec.fingerprint, users: users, userOrder: userOrder, consents: consents, consentKeys: consentKeys,
                 revoked: revoked, endedConsents: endedConsents, nextConsentID: nextConsentID, pendingCodes: pendingCodes.grants, transfers: transfers,
                 keys: keys.map { "\($0.keyID) \($0.state) \($0.publishedAt) \($0.activatedAt ?? -1) \($0.retiredAt ?? -1)" },
                 activeKeyID: activeKeyID, keysPublished: keysPublished, scheduleKeyIDs: schedule?.keyIDs, scheduleHorizon: schedule?.horizon,
                 start: start, nextTimelineEvent: nextTimelineEvent, refreshCounts: refreshCounts)
    }
}
