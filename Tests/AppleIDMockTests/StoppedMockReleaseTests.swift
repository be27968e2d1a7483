@testable import AppleIDMock
import Foundation
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// A stopped mock keeps nothing of itself alive, whatever it ran: a Swift suite that starts a mock
/// per test must not grow with every test. (The journal and the route table held each other, so
/// every stopped mock's domain, deliverer and mailbox stayed in memory.)
final class StoppedMockReleaseTests: XCTestCase {
    private final class Weak: @unchecked Sendable {
        weak var object: AnyObject?
        let name: String
        init(_ object: AnyObject, _ name: String) {
            self.object = object
            self.name = name
        }
    }

    private static func parts(_ assembly: MockAssembly) -> [Weak] {
        [Weak(assembly, "assembly"), Weak(assembly.domain, "domain"), Weak(assembly.domain.owner, "state owner"), Weak(assembly.domain.events, "event stream"),
         Weak(assembly.domain.publishedKeys, "published keys"),
         Weak(assembly.notifications, "notifications"), Weak(assembly.mailbox, "mailbox")]
            + (assembly.journal.map { [Weak($0, "journal")] } ?? [])
            + (assembly.stateWriter.map { [Weak($0, "state writer")] } ?? [])
    }

    /// Starts a server, has it answer (the journal records, a notification is queued), stops it,
    /// and returns weak references to its parts.
    private func runServer(_ adjust: @escaping (inout AppleIDMockConfiguration) -> Void = { _ in }) async throws -> [Weak] {
        let server = try startFrozenMock(adjust)
        let refs = [Weak(server, "server"), Weak(server.http, "http")] + Self.parts(server.assembly)
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try server.get("/__mock/requests?limit=1").status, server.assembly.journal == nil ? 409 : 200)
        _ = try server.nativeSignIn()
        XCTAssertEqual(try server.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#).status, 202)
        await server.stop()
        return refs
    }

    /// The parts still alive once the mock's threads have let go: a thread that has just
    /// resumed `stop()` may hold its part for a moment longer, so this waits for them (within
    /// `conditionBound`) before it answers.
    private func alive(_ refs: [Weak]) async throws -> [String] {
        try await eventually { !refs.contains(where: { $0.object != nil }) }
        return refs.filter { $0.object != nil }.map(\.name)
    }

    func testStoppedServer_IsFreed() async throws {
        let refs = try await runServer()
        XCTAssertEqual(refs.count, 10)
        let left = try await alive(refs)
        XCTAssertEqual(left, [])
    }

    func testStoppedServer_WithJournalOffSMTPAndRotation_IsFreed() async throws {
        let refs = try await runServer {
            $0.journal = false
            $0.smtpPort = 0
            $0.scenario.signingKeys.rotation = .init(every: 30 * 86_400, publishAhead: 7 * 86_400, retireAfter: 49 * 86_400)
        }
        XCTAssertEqual(refs.count, 9)
        let left = try await alive(refs)
        XCTAssertEqual(left, [])
    }

    func testStoppedServer_WithStateFile_IsFreed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stopped-mock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let refs = try await runServer { $0.statePath = directory.appendingPathComponent("state.sqlite").path }
        XCTAssertEqual(refs.map(\.name).last, "state writer")
        let left = try await alive(refs)
        XCTAssertEqual(left, [])
    }

    func testStoppedInMemoryMock_IsFreed() async throws {
        var mock: InMemoryMock? = try inMemoryMock()
        let refs = [Weak(try XCTUnwrap(mock), "mock")] + Self.parts(try XCTUnwrap(mock).assembly)
        let keys = await mock?.get("/auth/keys")
        XCTAssertEqual(keys?.status.code, 200)
        await mock?.stop()
        mock = nil
        let left = try await alive(refs)
        XCTAssertEqual(left, [])
    }

    /// The twin: a running mock is alive (the references above can see a leak).
    func testRunningServer_IsAlive() async throws {
        let server = try startFrozenMock()
        let refs = Self.parts(server.assembly)
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(refs.filter { $0.object != nil }.map(\.name), ["assembly", "domain", "state owner", "event stream", "published keys", "notifications", "mailbox", "journal"])
        await server.stop()
    }

    func testStoppedServer_StillNamesTheRoutesInItsJournal() async throws {
        // The journal keeps the route names, not the table: after the stop a test still finds
        // requests by their route template.
        let server = try startFrozenMock()
        XCTAssertEqual(try server.get("/__mock/faults/7").status, 404, "no fault 7, but the route took it")
        await server.stop()
        let found = server.requests(matching: RequestFilter(path: "/__mock/faults/{id}"))
        XCTAssertEqual(found.map(\.route), ["/__mock/faults/{id}"])
        XCTAssertEqual(found.map(\.path), ["/__mock/faults/7"])
        XCTAssertEqual(server.requests(matching: RequestFilter(path: "/__mock/mail/{id}")).count, 0)
    }
}
