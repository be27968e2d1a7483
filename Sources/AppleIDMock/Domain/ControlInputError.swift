/// Bad input to a control operation: what is wrong and the field at fault (400).
public struct ControlInputError: Error, Equatable, Sendable {
    /// What is wrong.
    public var message: String
    /// The field at fault.
    public var field: String
}
