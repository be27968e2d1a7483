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

    /// The names accepted, both spellings of deletion included.
    static let nameList = ["consent-revoked", "account-delete", "account-deleted", "email-disabled", "email-enabled"]

    /// The names accepted, for messages: `"a", "b" or "c"`.
    static let names = quoted(nameList)

    /// `names` as a message lists them: quoted, commas, `or` before the last.
    static func quoted(_ names: [String]) -> String {
        let quoted = names.map { "\"\($0)\"" }
        return quoted.dropLast().joined(separator: ", ") + (quoted.count > 1 ? " or " : "") + (quoted.last ?? "")
    }

    /// The type named `text`; both spellings of deletion are accepted.
    package init?(name text: String) {
        if text == "account-deleted" { self = .accountDelete } else { self.init(rawValue: text) }
    }
}
