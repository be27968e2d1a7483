/// The domains of Apple's private relay addresses (apple-reference.md §6).
public enum RelayDomain: String, Sendable, Equatable, CaseIterable {
    /// Where Apple issues new relay addresses since summer 2026 (Sign in with Apple and Hide My
    /// Email share it).
    case privateICloud = "private.icloud.com"
    /// Where relay addresses issued before then stay, and keep working.
    case privateRelayAppleID = "privaterelay.appleid.com"

    /// The domain Apple issues new addresses on today.
    public static let issued = RelayDomain.privateICloud

    /// The relay domain `address` is on, if any (the domain compared without regard to case,
    /// as mail domains are).
    public init?(address: String) {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...].lowercased()
        guard let known = RelayDomain(rawValue: domain) else { return nil }
        self = known
    }
}
