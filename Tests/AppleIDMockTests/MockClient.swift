import AppleIDMock
import MiniHTTP

/// Which door a test goes through: the route table in memory, or the live server over a socket.
enum MockMode: String, CaseIterable, Sendable {
    /// `InMemoryMock.respond`: no socket, no framing (Hummingbird's `.router`).
    case inMemory
    /// The running server on port 0 through the raw-socket client (Hummingbird's `.live`).
    case live
}

/// The mock as a test drives it: one request in, one answer out, the same in either mode, so a
/// test body written over it runs in memory or live (Hummingbird's `app.test(.router | .live)`).
/// Everything else a test does (sign in, redeem, move the clock…) is written once over
/// `respond` in `MockClient+Apple.swift` and `MockClient+Control.swift`.
protocol MockClient: Sendable {
    /// The door this client goes through.
    var mode: MockMode { get }

    /// The answer to `method target` with `headers` and `body`; like the raw-socket client, a
    /// request carries `Host: localhost` (unless `headers` name another), and a POST or a body
    /// its `Content-Length`.
    func respond(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) async throws -> MockAnswer

    /// Ends the mock (its teardown block calls this).
    func stop() async
}
