/// An account event a user causes at Apple (apple-behaviour.md §7).
public enum AccountEventType: String, Sendable, Equatable, CaseIterable {
    /// The user stopped using Sign in with Apple for the app.
    case consentRevoked = "consent-revoked"
    /// The user deleted their Apple Account (sent as the scenario's `account_deletion_event_type`).
    case accountDelete = "account-delete"
    /// The user turned off mail forwarding of their relay address.
    case emailDisabled = "email-disabled"
    /// The user turned it back on.
    case emailEnabled = "email-enabled"

    /// The names accepted, for messages.
    static let names = "\"consent-revoked\", \"account-delete\", \"account-deleted\", \"email-disabled\" or \"email-enabled\""

    /// The type named `text`; both spellings of deletion are accepted.
    package init?(name text: String) {
        if text == "account-deleted" { self = .accountDelete } else { self.init(rawValue: text) }
    }
}
