/// A function `StateOwner` calls (outside its lock) after an operation recorded events, set once
/// and never changed: kept behind a class reference so that reading it out of a lock copies a
/// pointer, not a closure the compiler re-wraps on every read.
final class EventListener: Sendable {
    /// The function itself.
    let call: @Sendable () -> Void

    /// Boxes `call`.
    init(_ call: @escaping @Sendable () -> Void) {
        self.call = call
    }
}
