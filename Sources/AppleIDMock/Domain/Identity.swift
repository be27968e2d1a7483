import JOSE

/// Apple's per-team identifiers for a user (apple-behaviour.md §6): the pairwise `sub` and the
/// private relay address, both stable per user per team and different across teams. Derived
/// from the ids with SHA-256, so they survive restarts and are the same on every machine.
package enum Identity {
    /// `NNNNNN.<32 hex>.NNNN`, e.g. `001624.47f6800a06bb4eb0b1baa142361e00c3.1452` (§4).
    package static func subject(teamID: String, userID: String) -> String {
        #if DEBUG
        derivationCounter?.increment()
        #endif
        let digest = SHA256.hash(Array("sub|\(teamID)|\(userID)".utf8))
        let hex = digest[0..<16].map { byte in String(byte, radix: 16).leftPadded(to: 2) }.joined()
        let head = digest[16..<22].map { String($0 % 10) }.joined()
        let tail = digest[22..<26].map { String($0 % 10) }.joined()
        return "\(head).\(hex).\(tail)"
    }

    /// The user's relay address in the team, on the user's relay domain.
    static func relayAddress(teamID: String, user: Scenario.User) -> String {
        relayAddress(teamID: teamID, userID: user.id, domain: user.relayDomain)
    }

    /// Ten lower-case letters and digits at the relay domain, e.g. `ep9ks2tnph@privaterelay.appleid.com`
    /// (§6). The local part depends on the team and user only.
    package static func relayAddress(teamID: String, userID: String, domain: RelayDomain) -> String {
        #if DEBUG
        derivationCounter?.increment()
        #endif
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let digest = SHA256.hash(Array("relay|\(teamID)|\(userID)".utf8))
        return String(digest[0..<10].map { alphabet[Int($0) % alphabet.count] }) + "@" + domain.rawValue
    }

    /// Whether `email` is on a relay domain (on `icloud.com`, that alone does not make it a
    /// relay address: `AppleIDDomain.relayVerdict`).
    package static func isRelayAddress(_ email: String) -> Bool {
        RelayDomain(address: email) != nil
    }

    /// Whether `email`'s local part has the shape `relayAddress` makes: ten lower-case letters and digits.
    static func hasRelayLocalPart(_ email: String) -> Bool {
        guard let at = email.lastIndex(of: "@") else { return false }
        let local = email.utf8[..<at]
        return local.count == 10 && local.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

extension String {
    /// Pads on the left with zeros to `length` characters.
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
