import Dispatch
import Synchronization

/// A value computed on another thread from the moment it is made; `value` waits for it.
final class BackgroundResult<Success: Sendable, Failure: Error>: Sendable {
    private let result = Mutex<Result<Success, Failure>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a global queue.
    init(_ work: @escaping @Sendable () throws(Failure) -> Success) {
        DispatchQueue.global().async { [self] in
            let outcome: Result<Success, Failure>
            do throws(Failure) {
                outcome = .success(try work())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// The result, once the work has ended (waits for it the first time).
    var value: Result<Success, Failure> {
        if let known = result.withLock({ $0 }) { return known }
        done.wait()
        done.signal()
        return result.withLock { $0! }
    }
}
