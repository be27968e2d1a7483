import AppleIDMock
import Foundation
import MiniHTTP
import Synchronization
import XCTest

// The mock in memory (`AppleIDMockServer.inMemory`): the same route table and notification
// deliverer the server runs, answering `HTTPRequest` values with no socket. For tests of what an
// endpoint answers; tests of what the wire does keep `startMock`.

/// The mock in memory with what `startMock` configures (the repository's signing keys, the log
/// dropped), then `adjust`. End it with `await mock.stop()` (an async teardown block).
func inMemoryMock(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> InMemoryMock {
    var configuration = AppleIDMockConfiguration()
    configuration.keysDirectory = repositoryRoot + "/Keys/signing"
    configuration.log = { _ in }
    adjust(&configuration)
    return try AppleIDMockServer.inMemory(configuration)
}

extension InMemoryMock {
    /// `GET target`.
    func get(_ target: String) async -> HTTPResponse {
        await respond(.get, target)
    }

    /// POSTs a JSON body, as the control API's callers do.
    func postJSON(_ path: String, _ body: String) async -> HTTPResponse {
        await respond(.post, path, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }
}

extension HTTPResponse {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A notification receiver without a socket: records every POST and answers `status` after
/// `delay` seconds, or, when made `blocking`, holds each POST until `release()` (a receiver that
/// never answers).
final class RecordingTransport: NotificationTransport {
    private struct State {
        var posts: [(url: String, body: String)] = []
        var released = false
    }

    private let state = Mutex(State())
    private let status: Int
    private let delay: Double
    private let blocking: Bool
    private let gate = DispatchSemaphore(value: 0)

    /// A receiver answering `status` after `delay` seconds; a `blocking` one answers only after `release()`.
    init(status: Int = 200, delay: Double = 0, blocking: Bool = false) {
        self.status = status
        self.delay = delay
        self.blocking = blocking
    }

    /// What was POSTed so far, in order.
    var posts: [(url: String, body: String)] { state.withLock { $0.posts } }

    /// Runs on the deliverer's worker thread, never on the cooperative pool: it may block.
    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        state.withLock { $0.posts.append((url, String(decoding: body, as: UTF8.self))) }
        if blocking && !state.withLock({ $0.released }) {
            gate.wait()
            gate.signal()
            return NotificationRecord.Attempt(at: Date().timeIntervalSince1970, status: nil, error: "released by the test")
        }
        if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
        return NotificationRecord.Attempt(at: Date().timeIntervalSince1970, status: status, error: nil)
    }

    /// Suspends until the first POST has arrived (and, at a blocking receiver, is held).
    func waitForFirstPost() async throws {
        let held = try await eventually { !posts.isEmpty }
        XCTAssertTrue(held, "no POST arrived")
    }

    /// Lets every held POST return, and later ones through at once.
    func release() {
        state.withLock { $0.released = true }
        gate.signal()
    }
}
