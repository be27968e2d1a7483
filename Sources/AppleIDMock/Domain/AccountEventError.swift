/// Why an account event could not happen, in the domain's terms; the control API maps the kind
/// to its status (400, 404, 409).
struct AccountEventError: Error, Equatable, Sendable {
    /// What kind of refusal.
    enum Kind: Sendable, Equatable {
        /// The input is not an event the mock knows (a bad `type`).
        case invalid
        /// No such user or client.
        case unknown
        /// Not possible in the current state (no consent, no relay address, account deleted).
        case notPossible
    }

    /// What kind of refusal.
    package var kind: Kind
    /// What is wrong.
    package var message: String
    /// The field at fault.
    package var field: String

    /// A refusal of `kind` naming `field`.
    init(_ kind: Kind, message: String, field: String) {
        self.kind = kind
        self.message = message
        self.field = field
    }
}
