/// Why an event could not happen: 400/404/409 with the field at fault.
public struct AccountEventError: Error, Equatable, Sendable {
    /// HTTP status: 404 unknown user or client, 409 not possible in the current state.
    public var status: Int
    /// What is wrong.
    public var message: String
    /// The field at fault.
    public var field: String
}
