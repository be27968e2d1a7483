/// The domains of Apple's private relay addresses (apple-behaviour.md §6).
package enum RelayDomain: String, Sendable, Equatable, CaseIterable {
    /// Where Apple says new Sign in with Apple relay addresses move "later this year" (its
    /// 2026-08-24 developer news; no date confirmed). Hide My Email stays on `icloud.com`.
    case privateICloud = "private.icloud.com"
    /// Where nearly every relay address issued so far lives, and keeps working.
    case privateRelayAppleID = "privaterelay.appleid.com"
    /// Apple's newer docs say a relay address may also be on `icloud.com` (§6 [D]), where
    /// iCloud+'s Hide My Email and real iCloud addresses live too: an `icloud.com` address is
    /// the relay's only when a user of the mock holds it (`AppleIDDomain.relayVerdict`), and
    /// `is_private_email` follows whether the user hid their email, never the domain.
    case iCloud = "icloud.com"

    /// The domain Apple issues new addresses on today: still `privaterelay.appleid.com` until
    /// the announced move happens.
    package static let issued = RelayDomain.privateRelayAppleID

    /// The relay domain `address` is on, if any (the domain compared without regard to case,
    /// as mail domains are).
    init?(address: String) {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...].lowercased()
        guard let known = RelayDomain(rawValue: domain) else { return nil }
        self = known
    }
}
