/// Why an account event could not happen, in the domain's terms; the control API maps the kind
/// to its status (400, 404, 409).
public struct AccountEventError: Error, Equatable, Sendable {
    /// What kind of refusal.
    public enum Kind: Sendable, Equatable {
        /// The input is not an event the mock knows (a bad `type`).
        case invalid
        /// No such user or client.
        case unknown
        /// Not possible in the current state (no consent, no relay address, account deleted).
        case notPossible
    }

    /// What kind of refusal.
    public var kind: Kind
    /// What is wrong.
    public var message: String
    /// The field at fault.
    public var field: String

    /// A refusal of `kind` naming `field`.
    public init(_ kind: Kind, message: String, field: String) {
        self.kind = kind
        self.message = message
        self.field = field
    }
}
