import Synchronization

/// Which users have authorized which app groups (apple-reference.md §5, §6): the owner of
/// "is this a first authorization?". Consent is shared by an App ID and everything grouped
/// under it. Revoking removes the record; tokens name the consent they were issued under, so
/// they die with it.
public final class ConsentStore: Sendable {
    /// Identifies a consent: the user, and the team's app group (its primary App ID).
    public struct Key: Hashable, Sendable {
        /// Team ID.
        public var teamID: String
        /// The primary App ID of the group.
        public var groupID: String
        /// Scenario user id.
        public var userID: String
    }

    /// What the user agreed to the first time.
    public struct Consent: Sendable, Equatable {
        /// Unique for every grant, never reused: a re-consent after revocation is a new id.
        public var id: UInt32
        /// Scopes granted (`name`, `email`).
        public var scopes: Set<String>
        /// Whether the user chose Hide My Email.
        public var hideEmail: Bool
        /// When it was granted.
        public var grantedAt: Int64
    }

    /// Who ended a consent, which decides the refresh error (§2.1, open question 7).
    public enum Revocation: Sendable, Equatable {
        /// The app called `/auth/revoke`.
        case byApp
        /// The user stopped using Sign in with Apple for the app (or deleted the account).
        case byUser
    }

    private struct State {
        var consents: [Key: Consent] = [:]
        var keys: [UInt32: Key] = [:]
        var revoked: [UInt32: Revocation] = [:]
        var nextID: UInt32 = 1
    }

    private let state = Mutex(State())

    /// An empty store.
    public init() {}

    /// Returns the user's consent for the group, creating it (a first authorization) when
    /// absent. Check-and-create is one critical section.
    public func authorize(_ key: Key, scopes: Set<String>, hideEmail: Bool, now: Int64) -> (consent: Consent, isFirst: Bool) {
        state.withLock { state in
            if let existing = state.consents[key] { return (existing, false) }
            let consent = Consent(id: state.nextID, scopes: scopes, hideEmail: hideEmail, grantedAt: now)
            state.nextID &+= 1
            state.consents[key] = consent
            state.keys[consent.id] = key
            return (consent, true)
        }
    }

    /// The live consent with this id.
    public func consent(id: UInt32) -> (key: Key, consent: Consent)? {
        state.withLock { state in
            guard let key = state.keys[id], let consent = state.consents[key], consent.id == id else { return nil }
            return (key, consent)
        }
    }

    /// The live consent for a key.
    public func consent(for key: Key) -> Consent? {
        state.withLock { $0.consents[key] }
    }

    /// How a dead consent id ended, if it was revoked.
    public func revocation(id: UInt32) -> Revocation? {
        state.withLock { $0.revoked[id] }
    }

    /// Ends the consent with this id; returns false when it was already gone.
    @discardableResult
    public func revoke(id: UInt32, by who: Revocation) -> Bool {
        state.withLock { state in
            guard let key = state.keys.removeValue(forKey: id) else { return false }
            state.consents[key] = nil
            state.revoked[id] = who
            return true
        }
    }

    /// Ends every consent of `userID` in `teamID` (all teams when nil); returns how many.
    @discardableResult
    public func revokeAll(userID: String, teamID: String? = nil, by who: Revocation) -> Int {
        state.withLock { state in
            let doomed = state.consents.filter { $0.key.userID == userID && (teamID == nil || $0.key.teamID == teamID) }
            for (key, consent) in doomed {
                state.consents[key] = nil
                state.keys[consent.id] = nil
                state.revoked[consent.id] = who
            }
            return doomed.count
        }
    }

    /// Number of live consents.
    public var count: Int { state.withLock { $0.consents.count } }
}
