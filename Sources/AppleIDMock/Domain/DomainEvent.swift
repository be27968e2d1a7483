/// What an operation on the mock's state did, for those who react to it (notifications, the
/// state log). Operations return their events; the state owner also keeps the latest ones.
public enum DomainEvent: Sendable, Hashable {
    /// A user authorized an app group for the first time (or again after a revocation).
    case consentGranted(userID: String, teamID: String, groupID: String, consentID: UInt32)
    /// A consent ended: by the app (`/auth/revoke`) or by the user.
    case consentRevoked(userID: String, teamID: String, groupID: String, consentID: UInt32, by: Consent.Revocation)
    /// A signing key appeared at `/auth/keys`.
    case keyPublished(kid: String)
    /// A key began signing new tokens.
    case keyActivated(kid: String)
    /// A key left `/auth/keys`; what it signed no longer verifies.
    case keyRetired(kid: String)
    /// The clock was moved, set, frozen or let run.
    case clockChanged(now: Int64, frozen: Bool)
    /// A user was added at runtime.
    case userAdded(userID: String)
    /// A team transfer began for a user.
    case transferStarted(userID: String, fromTeam: String, toTeam: String)
    /// A user deleted their Apple Account (notified to `teamID`'s app).
    case accountDeleted(userID: String, teamID: String)
    /// Relay mail forwarding of a user's address in a team went off or on.
    case relayForwardingChanged(userID: String, teamID: String, enabled: Bool)
    /// A scenario timeline event could not happen (its index and why).
    case timelineEventRefused(index: Int, message: String)
    /// Everything went back to the scenario's initial state.
    case reset
}
