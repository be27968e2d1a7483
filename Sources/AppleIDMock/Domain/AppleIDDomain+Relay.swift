extension AppleIDDomain {
    /// The relay's verdict on mail from the envelope `sender` to `recipient` (§6): a relay
    /// address (either domain, any case) is forwarded only to a known user who has not turned
    /// forwarding off for the team or deleted their account, and only from a domain or address
    /// the same team registered whose domain passes SPF; any other address is direct mail. One index lookup under the
    /// state lock.
    func relayVerdict(sender: String, recipient: String) -> RelayVerdict {
        let address = recipient.lowercased()
        guard let domain = RelayDomain(address: address) else { return .direct(address: recipient) }
        let teams = scenario.teams
        return owner.read { world, _ in
            guard let (teamID, userID) = world.user(relayAddress: address), let account = world.users[userID] else {
                // On icloud.com, an address no user holds is someone's own iCloud mail.
                if domain == .iCloud { return .direct(address: recipient) }
                return .refuse(relayAddress: address, refusal: .unknownRecipient, reason: "no user has the relay address \(address)")
            }
            if account.user.managed {
                return .refuse(relayAddress: address, refusal: .unknownRecipient, reason: "\(userID) is a managed account with no email to forward to")
            }
            if account.deleted { return .refuse(relayAddress: address, refusal: .accountDeleted, reason: "\(userID) deleted their Apple Account") }
            if account.relayDisabledTeams.contains(teamID) {
                return .refuse(relayAddress: address, refusal: .forwardingDisabled,
                               reason: "\(userID) turned off forwarding for team \(teamID) (email-disabled)")
            }
            let shown = sender.isEmpty ? "the null sender <>" : "the sender \(sender)"
            switch teams.first(where: { $0.teamID == teamID })?.emailSources.check(sender) ?? .unregistered {
            case .allowed:
                break
            case .unregistered:
                return .refuse(relayAddress: address, refusal: .unauthorizedSender, reason: "\(shown) is not registered in team \(teamID)'s email_sources")
            case .spfFail:
                return .refuse(relayAddress: address, refusal: .spfFail,
                               reason: "\(shown) is on a domain whose SPF check fails (team \(teamID)'s email_sources say \"spf\": \"fail\")")
            }
            return .forward(relayAddress: address, realAddress: account.user.email, userID: userID, teamID: teamID)
        }
    }
}
