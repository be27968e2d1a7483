/// Why a user could not be added.
enum UserOperationError: Error, Equatable, Sendable {
    /// A user with this id exists.
    case duplicate(String)
    /// The mock holds as many users as it will.
    case full(Int)
}
