/// What Apple's Private Email Relay does with mail to one recipient (apple-reference.md §6).
public enum RelayVerdict: Sendable, Equatable {
    /// A relay address of a user whose team registered the sender: forwarded to the real address.
    case forward(relayAddress: String, realAddress: String, userID: String, teamID: String)
    /// Not a relay address: accepted and kept as direct mail (a backend may send all its mail here).
    case direct(address: String)
    /// Refused with 550. `reason` is for the developer; Apple's reply never carries it.
    case refuse(relayAddress: String, reason: String)
}
