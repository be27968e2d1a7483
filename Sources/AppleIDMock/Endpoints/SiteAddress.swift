import Synchronization

/// The base URL clients reach the mock at, known only once the port is bound; set once at start.
final class SiteAddress: Sendable {
    private let value = Mutex("http://127.0.0.1")

    /// Records the base URL (no trailing slash).
    func set(_ url: String) { value.withLock { $0 = url } }

    /// The base URL.
    var url: String { value.withLock { $0 } }
}
