import CMiniHTTP
import Glibc

/// Starts a detached POSIX thread running `body`. The server uses this rather than Foundation's
/// `Thread` so that the product links FoundationEssentials only (no ICU, no libcurl): that
/// keeps a mock's idle memory small.
public enum LoopThread {
    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) { self.name = name; self.body = body }
    }

    /// Runs `body` on a new thread named `name` (truncated to the kernel's 15 bytes).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            mh_set_thread_name(start.name)
            start.body()
            return nil
        }, start)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
    }
}
