/// Bad input to a control operation: what is wrong and the field at fault (400).
struct ControlInputError: Error, Equatable, Sendable {
    /// What is wrong.
    package var message: String
    /// The field at fault.
    package var field: String
}
