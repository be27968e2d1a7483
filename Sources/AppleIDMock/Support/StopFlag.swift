import Synchronization

/// A flag one thread sets and others read: "stop what you are doing".
final class StopFlag: Sendable {
    /// False until set.
    let value = Atomic<Bool>(false)
}
