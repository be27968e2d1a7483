/// The mock holds as many pending authorization codes as it will (`CodeStore.capacity`): the
/// request is refused rather than memory grown. Rendered as a 503.
package struct CapacityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is full and what to do about it.
    package var message: String

    /// The error for a full code store.
    static func codes(_ capacity: Int) -> CapacityError {
        CapacityError(message: "the mock holds \(capacity) unredeemed authorization codes; redeem them or let them expire")
    }

    /// The message.
    package var description: String { message }
}
