/// What Apple's Private Email Relay does with mail to one recipient (apple-behaviour.md §6).
package enum RelayVerdict: Sendable, Equatable {
    /// A relay address of a user whose team registered the sender: forwarded to the real address.
    case forward(relayAddress: String, realAddress: String, userID: String, teamID: String)
    /// Not a relay address: accepted and kept as direct mail (a backend may send all its mail here).
    case direct(address: String)
    /// Refused with 550 and the scenario's text for `refusal`. `reason` is for the developer;
    /// Apple's reply never carries it.
    case refuse(relayAddress: String, refusal: RelayRefusal, reason: String)
}

/// Why the relay refuses a recipient: each has its own reply text
/// (`compatibility.relay_refusal`).
package enum RelayRefusal: String, Sendable, Equatable, CaseIterable {
    /// No user has the relay address.
    case unknownRecipient = "unknown_recipient"
    /// The user deleted their Apple Account.
    case accountDeleted = "account_deleted"
    /// The user turned forwarding off for the team (`email-disabled`).
    case forwardingDisabled = "forwarding_disabled"
    /// The sender is not among the team's registered `email_sources`.
    case unauthorizedSender = "unauthorized_sender"
    /// The sender's domain is registered but fails SPF (`"spf": "fail"`).
    case spfFail = "spf_fail"
}
