import Synchronization

/// A continuation that several parties race to resume (the work done, a deadline passed): the
/// first `resume` wins and the others do nothing, so it is resumed exactly once.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    /// Holds `continuation` until the first `resume`.
    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes with `value` unless resumed already.
    func resume(returning value: Value) {
        continuation.withLock { taken in
            defer { taken = nil }
            return taken
        }?.resume(returning: value)
    }
}
