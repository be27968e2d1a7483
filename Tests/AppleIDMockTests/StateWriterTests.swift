@testable import AppleIDMock
import Foundation
import Glibc
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The state file's writer under load and failure: compaction seeks by key or index and runs a
/// step at a time between commits (probe P2); health answers without waiting for the writer; a
/// commit that fails is a 503 with its reason on every answer that depends on it, and the mock
/// takes up again when the file does (probe P6), proven on a small full tmpfs.
final class StateWriterTests: XCTestCase {
    private var madePaths: [String] = []

    override func tearDown() {
        for path in madePaths {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        madePaths = []
        super.tearDown()
    }

    private func newPath(_ name: String = "writer") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        madePaths.append(path)
        return path
    }

    // MARK: - P2: compaction

    func testCompaction_EveryStatementSeeksByKeyOrIndex_NoneScans_P2() throws {
        let file = try StateFile(path: newPath(), scenarioJSON: Scenario.default.prettyJSON)
        defer { file.close() }
        for (statement, plan) in zip(StateFile.compactionStatements, try file.queryPlans()) {
            XCTAssertFalse(plan.isEmpty)
            XCTAssertEqual(plan.filter { $0.hasPrefix("SCAN") }, [], "\(statement): \(plan)")
        }
    }

    /// The statement the probe found: for every code issued, a walk through the later events to
    /// the first codes-expired that covers it.
    private static let quadratic = """
        DELETE FROM events AS issued WHERE issued.sequence > ?1 AND issued.sequence <= ?2 AND issued.type = 'code-issued' AND EXISTS
          (SELECT 1 FROM events AS expiry WHERE expiry.type = 'codes-expired' AND expiry.sequence > issued.sequence AND expiry.expires >= issued.expires)
        """

    /// A state file holding `codes` unredeemed codes, one codes-expired that covers them all
    /// after them, then the newest 10,000 events (inert); its last sequence.
    private func unredeemed(_ codes: Int) throws -> (StateFile, Int64) {
        let file = try StateFile(path: newPath("unredeemed"), scenarioJSON: Scenario.default.prettyJSON)
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        try file.writeGenesis(try AppleIDDomain(configuration: configuration).owner.genesis)
        var batch = StateBatch()
        var sequence: UInt64 = 0
        func record(_ event: DomainEvent) throws {
            sequence += 1
            batch.events.append(RecordedEvent(sequence: sequence, at: 1_700_000_000, event: event))
            if batch.events.count == 5000 {
                try file.write(batch)
                batch = StateBatch()
            }
        }
        for index in 0..<codes {
            try record(.codeIssued(code: "c\(index)", grant: AuthorizationGrant(
                clientID: "com.example.app", redirectURI: nil, consentID: 1, teamID: "MOCKTEAM01", userID: "alice", nonce: nil, codeChallenge: nil,
                codeChallengeMethod: nil, authTime: 1_700_000_000, expiresAt: 1_700_000_300 + Int64(index), flow: .native, isFirstAuthorization: true, defect: nil)))
        }
        try record(.codesExpired(at: 1_800_000_000, count: codes))
        for _ in 0..<10_000 { try record(.tokensIssued(grantType: "refresh_token", clientID: "com.example.app", userID: "alice", consentID: 1)) }
        try file.write(batch)
        return (file, Int64(sequence))
    }

    func testCompaction_CostsInProportionToTheCodesItLooksThrough_P2() throws {
        // Probe P2: compaction was quadratic in unredeemed codes (19 s at 20,000, 283 s at 60,000,
        // every commit held meanwhile). Its cost here is SQLite's own step count, the same on any machine.
        var costs: [Int64] = []
        var twins: [Int64] = []
        for codes in [2_000, 4_000] {
            let (file, last) = try unredeemed(codes)
            twins.append(try file.steps(of: Self.quadratic, from: 0, upTo: last - StateFile.keptEvents))
            while try !file.compactStep() {}
            costs.append(file.compactionSteps)
            XCTAssertFalse(file.compactionDue)
            file.close()
        }
        print("compaction steps for 2,000 and 4,000 unredeemed codes: \(costs); the old statement alone: \(twins)")
        XCTAssertLessThan(Double(costs[1]) / Double(costs[0]), 2.2, "twice the codes, about twice the cost: \(costs)")
        // The twin: the old statement, on the same files, costs four times as much for twice the codes.
        XCTAssertGreaterThan(Double(twins[1]) / Double(twins[0]), 3.5, "\(twins)")
    }

    func testCompaction_DropsWhatNoLaterStateNeeds_AStepAtATime() throws {
        let (file, last) = try unredeemed(3_000)
        var steps = 0
        while try !file.compactStep() { steps += 1 }
        XCTAssertGreaterThan(steps, 0, "more than one short transaction")
        file.close()
        // The expired codes' issues are gone; the codes-expired and the newest 10,000 stay.
        let reopened = try StateFile(path: madePaths.last!, scenarioJSON: Scenario.default.prettyJSON, readOnly: true)
        let kept = try XCTUnwrap(reopened.stored).events
        XCTAssertEqual(kept.count, 10_001)
        XCTAssertEqual(kept.first?.event.name, "codes-expired")
        XCTAssertEqual(kept.last?.sequence, UInt64(last))
    }

    func testCompaction_KeepsOnlyTheLatestOfEachCount_ATokensRefreshesAndATimesFaultsFirings() throws {
        let file = try StateFile(path: newPath("counts"), scenarioJSON: Scenario.default.prettyJSON)
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        try file.writeGenesis(try AppleIDDomain(configuration: configuration).owner.genesis)
        let tokenA = RefreshCount.Token(consentID: 1, clientID: "com.example.app", issuedAt: 1_700_000_000)
        let tokenB = RefreshCount.Token(consentID: 2, clientID: "com.example.app", issuedAt: 1_700_000_000)
        var events: [DomainEvent] = [1, 2, 3].map { .refreshCounted(RefreshCount(token: tokenA, day: 19_676, count: $0)) }
        events.append(.refreshCounted(RefreshCount(token: tokenB, day: 19_676, count: 1)))
        events += [2, 1].map { .faultFired(FaultFiring(faultID: "f1", action: "respond", target: "POST /auth/token", fired: 3 - $0, remaining: $0)) }
        events.append(.faultFired(FaultFiring(faultID: "f2", action: "respond", target: "POST /auth/token", fired: 1)))
        events += Array(repeating: .tokensIssued(grantType: "refresh_token", clientID: "com.example.app", userID: "alice", consentID: 1), count: 10_000)
        var batch = StateBatch()
        batch.events = events.enumerated().map { RecordedEvent(sequence: UInt64($0.offset + 1), at: 1_700_000_000, event: $0.element) }
        try file.write(batch)
        while try !file.compactStep() {}
        file.close()
        let reopened = try StateFile(path: madePaths.last!, scenarioJSON: Scenario.default.prettyJSON, readOnly: true)
        let kept = try XCTUnwrap(reopened.stored).events.filter { $0.sequence <= 7 }
        // The last count of token A, token B's only one, and f1's last firing stay; f2 counts nothing.
        XCTAssertEqual(kept.map(\.sequence), [3, 4, 6])
        XCTAssertEqual(kept.map(\.event), [events[2], events[3], events[5]])
    }

    // MARK: - Health without the writer

    /// The built-in scenario's domain over a state file whose writer never runs (no commit ever
    /// lands), and its route table with answers waiting for commits.
    private func uncommittedRoutes() throws -> (AppleIDDomain, RouteTable) {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.log = { _ in }
        // Durable: answers wait for commits, and nothing (no file, no writer) ever makes one.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let routes = Routes.table(domain: domain, site: SiteAddress(), control: ControlGuard(allowedHosts: [], token: nil),
                                  requests: RequestLog(level: .error, sink: { _ in }, committing: domain.events.barrier))
        return (domain, routes)
    }

    private static func get(_ routes: RouteTable, _ target: String) async -> HTTPResponse {
        await routes.respond(to: HTTPRequest(method: .get, target: target, headers: ["Host": "127.0.0.1"]))
    }

    func testHealth_AnswersAtOnce_WhileAChangeWaitsForItsCommit_P2() async throws {
        let (domain, routes) = try uncommittedRoutes()
        let signer = domain.signingKeyID
        _ = try domain.addUser(Scenario.User(id: "waiting", email: "waiting@example.com", givenName: "W", familyName: "W"))
        // Another answer that depends on the change waits for the commit…
        let clock = Task { [routes] in await routes.respond(to: HTTPRequest(method: .get, target: "/__mock/clock", headers: ["Host": "127.0.0.1"])) }
        // …health does not (before, it waited for the writer: 64 s behind a compaction).
        let health = await Self.get(routes, "/__mock/health")
        XCTAssertEqual(health.status.code, 200)
        XCTAssertEqual(try JSONParser.parse(health.body).objectValue?["active_kid"]?.stringValue, signer)
        // The twin: once committed, the waiting answer goes.
        domain.events.barrier.markCommitted(upTo: .max)
        let answered = await clock.value
        XCTAssertEqual(answered.status.code, 200)
    }

    // MARK: - P6: a commit that fails

    func testFailingCommits_AnswerEveryDependentRequest503WithTheReason_AndHealthSaysWhy_P6() async throws {
        let (domain, routes) = try uncommittedRoutes()
        _ = try domain.addUser(Scenario.User(id: "pending", email: "pending@example.com", givenName: "P", familyName: "P"))
        // An answer already waiting is told when the commit fails.
        let waiting = Task { [routes] in await routes.respond(to: HTTPRequest(method: .post, target: "/__mock/users",
                                                                  headers: ["Host": "127.0.0.1", "Content-Type": "application/json"],
                                                                  body: Array(#"{"id":"second","email":"second@example.com"}"#.utf8))) }
        let held = try await eventually { domain.user("second") != nil }
        XCTAssertTrue(held, "the second user was never recorded")
        domain.events.barrier.markCommitFailed("not writable (disk full)")
        let told = await waiting.value
        XCTAssertEqual(told.status.code, 503)
        XCTAssertEqual(try JSONParser.parse(told.body).objectValue?["error"]?.stringValue,
                       "state file: not writable (disk full); the change is kept and committed once the file takes it again")
        // Later answers are told at once: the control API, Apple's JSON endpoints, Apple's page.
        let health = await Self.get(routes, "/__mock/health")
        XCTAssertEqual(health.status.code, 503)
        XCTAssertEqual(String(decoding: health.body, as: UTF8.self),
                       #"{"active_kid":"\#(domain.signingKeyID ?? "")","issuer":"https://appleid.apple.com","state_file":"not writable (disk full)","status":"unavailable"}"#)
        let clock = await Self.get(routes, "/__mock/clock")
        XCTAssertEqual(clock.status.code, 503)
        let token = await routes.respond(to: HTTPRequest(method: .post, target: "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                         body: Array("grant_type=authorization_code&code=x&client_id=com.example.app".utf8)))
        XCTAssertEqual(token.status.code, 503)
        XCTAssertEqual(String(decoding: token.body, as: UTF8.self), #"{"error":"temporarily_unavailable"}"#)
        let page = await Self.get(routes, "/auth/authorize?client_id=com.example.web&redirect_uri=\(webRedirect)&response_type=code")
        XCTAssertEqual(page.status.code, 503)
        XCTAssertTrue(String(decoding: page.body, as: UTF8.self).contains("temporarily_unavailable"))
        // The twin: once a commit succeeds, the same requests are answered as ever.
        domain.events.barrier.markCommitted(upTo: .max)
        let healthAgain = await Self.get(routes, "/__mock/health")
        let clockAgain = await Self.get(routes, "/__mock/clock")
        let tokenAgain = await routes.respond(to: HTTPRequest(method: .post, target: "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                              body: Array("grant_type=authorization_code&code=x&client_id=com.example.app".utf8)))
        XCTAssertEqual(healthAgain.status.code, 200)
        XCTAssertEqual(clockAgain.status.code, 200)
        XCTAssertEqual(tokenAgain.status.code, 400)
        XCTAssertNotNil(domain.user("second"), "the change was kept")
    }

    /// The descriptors this process has open.
    private func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    /// Runs `arguments` and returns its exit status.
    @discardableResult
    private func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func testDiskFull_Is503AndHealthSaysWhy_DescriptorsReturn_AndNothingAcknowledgedIsLost_P6() throws {
        let mount = FileManager.default.temporaryDirectory.appendingPathComponent("diskfull-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mount) }
        guard getuid() == 0, run(["/bin/mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]) == 0 else {
            throw XCTSkip("a small tmpfs cannot be mounted here (the test needs root and mount): the disk-full path is not run")
        }
        defer { run(["/bin/umount", "-l", mount]) }
        let path = mount + "/state.sqlite"
        var server: AppleIDMockServer? = try startFrozenMock { $0.statePath = path }
        let baseline = openDescriptors()
        // Fill the disk to a few KiB.
        let filler = mount + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 0x46, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, 4096) }) == 4096 {}
        close(fd)
        truncate(filler, off_t(max(0, (try FileManager.default.attributesOfItem(atPath: filler)[.size] as? Int ?? 0) - 24 * 1024)))
        // Users are acknowledged (201) until a commit fails; from then on, 503 with the reason.
        var acknowledged: [String] = []
        var refusal: RawHTTPResponse?
        for index in 0..<2000 where refusal == nil {
            let id = "u\(index)"
            let answer = try XCTUnwrap(server).postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"\#(String(repeating: "n", count: 200))"}"#)
            if answer.status == 201 { acknowledged.append(id) } else { refusal = answer }
        }
        let refused = try XCTUnwrap(refusal, "the disk never filled")
        XCTAssertEqual(refused.status, 503, refused.text)
        XCTAssertTrue(refused.text.contains("state file: not writable (disk full)"), refused.text)
        let health = try XCTUnwrap(server).get("/__mock/health")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(try JSONParser.parse(health.body).objectValue?["state_file"]?.stringValue, "not writable (disk full)")
        // A sign-in, natively and at Apple's token endpoint: 503.
        XCTAssertEqual(try XCTUnwrap(server).nativeSignIn(user: "alice").status, 503)
        let token = try XCTUnwrap(server).postForm("/auth/token", [("grant_type", "authorization_code"), ("code", "x"), ("client_id", "com.example.app")])
        XCTAssertEqual(token.status, 503)
        XCTAssertEqual(token.text, #"{"error":"temporarily_unavailable"}"#)
        // Every client was answered: no descriptor is left behind.
        XCTAssertTrue(eventuallyTrue { self.openDescriptors() <= baseline + 2 }, "descriptors \(openDescriptors()) against \(baseline)")
        // Space returns: the mock takes up again by itself, and what was acknowledged is all there after a restart.
        try FileManager.default.removeItem(atPath: filler)
        XCTAssertTrue(eventuallyTrue { (try? server?.get("/__mock/health").status) == 200 })
        XCTAssertEqual(try XCTUnwrap(server).nativeSignIn(user: "alice").status, 200)
        server?.stop()
        server = nil
        let restarted = try startFrozenMock { $0.statePath = path }
        defer { restarted.stop() }
        let users = Set(restarted.domain.users.map(\.user.id))
        XCTAssertEqual(acknowledged.filter { !users.contains($0) }, [], "acknowledged users lost")
    }
}

