import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// Single-use codes stay single-use when many requests race for one code over real sockets
/// (house style rule 5; docs/apple-behaviour.md §9).
final class CodeRedemptionRaceTests: XCTestCase {
    /// Releases every waiting thread at once when the last one arrives.
    private final class Barrier: @unchecked Sendable {
        private let condition = NSCondition()
        private var waiting = 0
        private let parties: Int

        init(parties: Int) { self.parties = parties }

        func arriveAndWait() {
            condition.lock()
            waiting += 1
            if waiting == parties {
                condition.broadcast()
            } else {
                while waiting < parties { condition.wait() }
            }
            condition.unlock()
        }
    }

    /// Sends `requests` redemptions of `code`, each on its own connection and thread, released
    /// together; returns every outcome (status and body, or the client error).
    private func race(_ server: AppleIDMockServer, code: String, requests: Int) throws -> [String] {
        let secret = try server.secret()
        let body = Array(HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", secret), ("code", code),
                                          ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]).utf8)
        // Connect everyone first so the race is on the redemption, not on accept().
        let clients = try (0..<requests).map { _ in try server.client() }
        nonisolated(unsafe) let shared = clients
        let barrier = Barrier(parties: requests)
        let outcomes = Mutex([String]())
        let group = DispatchGroup()
        for index in 0..<requests {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                barrier.arriveAndWait()
                let outcome: String
                do {
                    let response = try shared[index].roundTrip("POST", "/auth/token",
                                                               headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body)
                    outcome = "\(response.status) \(response.status == 200 ? "ok" : response.text)"
                } catch {
                    outcome = "client error: \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
            }
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "redemptions did not finish")
        return outcomes.withLock { $0 }
    }

    func testCodeRedemption_FiftyConcurrentRedemptions_ExactlyOneSucceeds() throws {
        let server = try startFrozenMock { $0.http.eventLoopCount = 4 }
        defer { server.stop() }
        let used = #"400 {"error":"invalid_grant","error_description":"The code has already been used."}"#
        for round in 0..<4 {
            let code = try server.webCode()
            let outcomes = try race(server, code: code, requests: 50)
            XCTAssertEqual(outcomes.count, 50, "round \(round)")
            XCTAssertEqual(outcomes.filter { $0 == "200 ok" }.count, 1, "round \(round): \(Set(outcomes))")
            XCTAssertEqual(outcomes.filter { $0 == used }.count, 49, "round \(round): \(Set(outcomes))")
            // After the race the code is spent for everyone.
            assertAppleError(try server.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        }
    }

    func testCodeRedemption_DistinctCodesRacingTogether_AllSucceed() throws {
        // The twin: concurrency itself does not make good redemptions fail.
        let server = try startFrozenMock()
        defer { server.stop() }
        let codes = try (0..<20).map { _ in try server.webCode() }
        let secret = try server.secret()
        let clients = try codes.map { _ in try server.client() }
        nonisolated(unsafe) let shared = clients
        let statuses = Mutex([Int]())
        let barrier = Barrier(parties: codes.count)
        let group = DispatchGroup()
        for (index, code) in codes.enumerated() {
            let body = Array(HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", secret), ("code", code),
                                              ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]).utf8)
            group.enter()
            Thread {
                defer { group.leave() }
                barrier.arriveAndWait()
                let status = (try? shared[index].roundTrip("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                           body: body).status) ?? -1
                statuses.withLock { $0.append(status) }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(statuses.withLock { $0 }, Array(repeating: 200, count: codes.count))
    }

    func testFirstAuthorization_ConcurrentApprovals_ExactlyOneGetsUserJSON() throws {
        // Consent check-and-create is one critical section: racing first sign-ins of one user
        // yield one first authorization.
        let server = try startFrozenMock()
        defer { server.stop() }
        let body = Array(#"{"client_id":"com.example.web","redirect_uri":"http://localhost:3000/callback","response_type":"code","response_mode":"form_post","scope":"name email","user":"alice"}"#.utf8)
        let count = 30
        let clients = try (0..<count).map { _ in try server.client() }
        nonisolated(unsafe) let shared = clients
        let withUser = Mutex([Bool]())
        let barrier = Barrier(parties: count)
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread {
                defer { group.leave() }
                barrier.arriveAndWait()
                guard let response = try? shared[index].roundTrip("POST", "/__mock/authorize", headers: [("Content-Type", "application/json")], body: body),
                      response.status == 200 else { return }
                withUser.withLock { $0.append(response.text.contains(#""user":"#)) }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        let results = withUser.withLock { $0 }
        XCTAssertEqual(results.count, count)
        XCTAssertEqual(results.filter { $0 }.count, 1)
    }
}
