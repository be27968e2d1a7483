@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `StateFileTests`: an answer goes out once what it depends on is committed; notifications and compaction.
extension StateFileTests {
    // MARK: - Commit before answer

    func testRequestLog_HoldsTheAnswer_UntilTheEventsItRecordedAreCommitted() async throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario = frozenScenario()
        configuration.statePath = newPath()
        configuration.log = { _ in }
        // The domain alone, durable: no writer commits; the test plays the writer.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let barrier = domain.events.barrier
        XCTAssertTrue(barrier.enabled)
        let authorize = try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                                      "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n"])
        let code = try XCTUnwrap(try domain.approve(authorize, AppleIDDomain.Approval(userID: "alice")).parameters.first { $0.0 == "code" }?.1)
        XCTAssertEqual(domain.owner.takeUnwritten().events.map(\.event.name), ["consent-granted", "code-issued"])
        barrier.markCommitted(upTo: barrier.counted)
        let committed = barrier.counted

        let returned = Atomic<Bool>(false)
        let answered = Atomic<Bool>(false)
        let endpoint = TokenEndpoint(domain: domain)
        let handler = RequestLog(level: .error, sink: { _ in }, committing: barrier).apple("/auth/token") { request in
            let response = try endpoint.handle(request)
            returned.store(true, ordering: .releasing)
            return response
        }
        guard case .deferred(let respond) = handler else { return XCTFail("a committing log answers deferred") }
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.web", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        let form = HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", secret), ("code", code),
                                    ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)])
        let request = HTTPRequest(method: .post, target: "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                  body: Array(form.utf8))
        let answer = Task {
            let response = try await respond(request)
            answered.store(true, ordering: .releasing)
            return response
        }
        try await eventually { returned.load(ordering: .acquiring) }
        XCTAssertTrue(returned.load(ordering: .acquiring), "the endpoint answered")
        // The redemption is recorded, handed to the writer, not yet committed: the answer waits.
        XCTAssertEqual(domain.owner.takeUnwritten().events.map(\.event.name), ["code-redeemed", "tokens-issued"])
        XCTAssertEqual(barrier.counted, committed + 2)
        for _ in 0..<20 { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertFalse(answered.load(ordering: .acquiring), "answered before its events were committed")
        // Committed through the first of its two events only: still waiting.
        barrier.markCommitted(upTo: committed + 1)
        for _ in 0..<20 { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertFalse(answered.load(ordering: .acquiring), "answered before its last event was committed")
        barrier.markCommitted(upTo: committed + 2)
        let response = try await answer.value
        XCTAssertEqual(response.status, .ok)
    }

    func testKeysEndpoint_ServesARotatedKey_OnlyOnceItsChangeIsCommitted() async throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario = frozenScenario()
        configuration.statePath = newPath()
        configuration.log = { _ in }
        // The domain alone, durable: no writer commits; the test plays the writer.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let barrier = domain.events.barrier
        func served() throws -> [String] {
            let keys = try XCTUnwrap(try jsonObject(domain.jwksBody(shuffled: false))["keys"]?.arrayValue)
            return keys.compactMap { $0.objectValue?["kid"]?.stringValue }
        }
        let before = try served()
        let rotated = try await domain.rotateKeys().keyID
        XCTAssertEqual(domain.signingKeyID, rotated)
        XCTAssertEqual(try served(), before, "a key served before its publication was committed")
        barrier.markCommitted(upTo: barrier.counted - 1)
        XCTAssertEqual(try served(), before, "a key served before the last change of its rotation was committed")
        barrier.markCommitted(upTo: barrier.counted)
        XCTAssertEqual(try served(), before + [rotated])
    }

    func testTokenEndpoint_AnswersOnlyOnceTheRedemptionIsInTheFile() throws {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        defer { server.stop() }
        func inFile(_ text: String) throws -> Bool {
            let bytes = [UInt8](try contents(path)) + [UInt8]((try? contents(path + "-wal")) ?? Data())
            return bytes.firstRange(of: Array(text.utf8)) != nil
        }
        // The writer usually wins the race anyway (a redemption signs an id_token after it is
        // recorded): thirty redemptions make a missing wait show.
        for _ in 0..<30 {
            let code = try server.webCode()
            let redemption = #"{"type":"code-redeemed","code":"\#(code)""#
            XCTAssertFalse(try inFile(redemption), "not redeemed yet")
            XCTAssertEqual(try server.redeem(code).status, 200)
            XCTAssertTrue(try inFile(redemption), "answered before the redemption was committed")
        }
    }

    // MARK: - Notifications

    func testNotification_PendingAtTheStop_IsDeliveredAfterARestart() throws {
        var scenario = frozenScenario()
        scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
        let path = newPath()
        let first = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationShutdownGrace = 0
        }
        XCTAssertEqual(try first.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let fired = try first.postJSON("/__mock/events", #"{"type":"email-disabled","user":"bob","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status, 202, fired.text)
        let id = UInt64(try XCTUnwrap(try jsonObject(fired.body)["notification"]?.intValue))
        // Port 9 refuses: the first attempt fails and a retry is scheduled.
        eventuallyTrue { first.notifications.records(after: id - 1).first?.attempts.isEmpty == false }
        let refused = try XCTUnwrap(first.notifications.records(after: id - 1).first)
        XCTAssertEqual(refused.attempts.count, 1)
        XCTAssertNil(refused.attempts.first?.status)
        first.stop()

        let receiver = RecordingTransport(status: 200)
        let second = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationTransport = receiver
        }
        defer { second.stop() }
        XCTAssertEqual(second.notifications.records().map(\.id), [id], "the log came back with the undelivered record")
        eventuallyTrue { second.notifications.records(after: id - 1).first?.outcome == .delivered }
        let delivered = try XCTUnwrap(second.notifications.records(after: id - 1).first)
        XCTAssertEqual(delivered.outcome, .delivered)
        XCTAssertEqual(delivered.attempts.map(\.status), [nil, 200])
        XCTAssertEqual(delivered.sequence, refused.sequence)
        XCTAssertEqual(receiver.posts.map(\.url), ["http://127.0.0.1:9/apple"])
        // The twin: a restart without the file has no record to deliver.
        let forgetful = try startMock { configuration in
            configuration.scenario = scenario
            configuration.notificationTransport = RecordingTransport(status: 200)
        }
        defer { forgetful.stop() }
        XCTAssertTrue(forgetful.notifications.records().isEmpty)
    }

    func testAtScale_NotificationLog_KeepsAnUndeliveredRecord_AcrossARestart_WhenTheLogIsFull() async throws {
        // One app group has a receiver that refuses (retried in an hour); the built-in group has
        // no URL, so its records settle at once. A full log steps over the undelivered record at
        // its front and drops the settled ones behind it.
        var scenario = frozenScenario()
        scenario.teams[0].clients.append(Scenario.Client(clientID: "com.example.watched", kind: .appID, notificationURL: "http://127.0.0.1:9/apple"))
        scenario.compatibility.notificationRetryDelays = [3600]
        let path = newPath()
        let first = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationShutdownGrace = 0
        }
        _ = try await first.signInNative(user: "bob", clientID: "com.example.watched", hideEmail: true)
        let pending = try await first.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.watched")
        let pendingID = try XCTUnwrap(pending)
        eventuallyTrue { first.notifications.records().first?.attempts.isEmpty == false }
        _ = try await first.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        for index in 0..<(NotificationDeliverer.logCapacity + 50) {
            try first.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            first.notifications.collect()
        }
        let kept = first.notifications.records()
        XCTAssertEqual(kept.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(kept.first?.id, pendingID, "the undelivered record stays at the front of the log")
        XCTAssertEqual(kept.first?.outcome, .pending)
        await first.stop()

        let second = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationTransport = RecordingTransport(status: 200)
        }
        addTeardownBlock { await second.stop() }
        let restored = second.notifications.records()
        XCTAssertEqual(restored.count, kept.count)
        XCTAssertEqual(restored.first?.id, pendingID, "the undelivered record is lost after the restart")
        XCTAssertEqual(restored.first?.outcome, .pending)
        XCTAssertEqual(restored.last?.id, kept.last?.id)
    }

    // MARK: - Compaction

    func testAtScale_StateFile_CompactsOldInertEvents_AndTheRestartedWorldIsTheSame() async throws {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        let domain = server.domain
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.web", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        func issue(_ user: String) throws -> String {
            let request = try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                                        "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n"])
            return try XCTUnwrap(try domain.approve(request, AppleIDDomain.Approval(userID: user)).parameters.first { $0.0 == "code" }?.1)
        }
        func redeem(_ code: String) throws -> JSONObject {
            try domain.token(form: ["client_id": "com.example.web", "client_secret": secret, "grant_type": "authorization_code", "code": code,
                              "redirect_uri": webRedirect])
        }
        // Early state that must survive: a code that expires, and one still pending at the end.
        let expired = try issue("alice")
        try await domain.advanceClock(by: 301)
        let pending = try issue("bob")
        // Real code issue/redemption pairs (three events each), then inert tokens-issued events in
        // operations of 100, each operation committed before the next: ~22,000 events in all.
        var redeemed: [String] = []
        for _ in 0..<1_000 {
            let code = try issue("alice")
            _ = try redeem(code)
            redeemed.append(code)
            if redeemed.count % 30 == 0 { try await domain.events.barrier.settle() }
        }
        try await recordInertEvents(domain, until: 22_000)
        let last = domain.lastEventSequence
        let before = snapshot(domain)
        let feed = domain.events.events()
        await server.stop()

        let archive = try jsonObject(Array(try StateArchive.export(path: path).utf8))
        let kept = try XCTUnwrap(archive["events"]?.arrayValue).compactMap { entry -> (sequence: UInt64, type: String, code: String?)? in
            guard let object = entry.objectValue, let sequence = object["sequence"]?.intValue, let event = object["event"]?.objectValue,
                  let type = event["type"]?.stringValue else { return nil }
            return (UInt64(sequence), type, event["code"]?.stringValue)
        }
        XCTAssertLessThan(kept.count, Int(last) - 5_000, "old inert events were dropped")
        XCTAssertEqual(kept.filter { $0.sequence > last - 10_000 }.map(\.sequence), Array((last - 9_999)...last), "the newest 10,000 are kept whole")
        XCTAssertEqual(kept.filter { $0.sequence <= 10_000 && ($0.type == "tokens-issued" || $0.type == "fault-fired") }.count, 0)
        let keptCodes = Set(kept.compactMap(\.code))
        XCTAssertTrue(redeemed.allSatisfy { !keptCodes.contains($0) }, "a redeemed code's issue and redemption both go")
        XCTAssertFalse(keptCodes.contains(expired), "an expired code's issue goes")
        XCTAssertTrue(keptCodes.contains(pending), "a pending code's issue stays")
        XCTAssertEqual(kept.filter { $0.type == "consent-granted" }.count, 2, "consents stay")

        let restarted = try startFrozenMock { $0.statePath = path }
        XCTAssertEqual(snapshot(restarted.domain), before)
        XCTAssertEqual(restarted.domain.lastEventSequence, last)
        let restoredFeed = restarted.domain.events.events()
        XCTAssertEqual(restoredFeed.events.first?.sequence, last - 9_999, "the feed's oldest event")
        XCTAssertEqual(restoredFeed.missed, last - 10_000)
        XCTAssertEqual(restoredFeed.events, feed.events)
        XCTAssertEqual(try restarted.domain.token(form: ["client_id": "com.example.web", "client_secret": secret, "grant_type": "authorization_code",
                                                   "code": pending, "redirect_uri": webRedirect])["token_type"], "Bearer")
        XCTAssertEqual(restarted.domain.recordedEvents(after: last).first?.sequence, last + 1)
        await restarted.stop()
    }

    func testAtScale_StateFile_CompactsOldInertEvents_WhenTheyWereWrittenAcrossRestarts() async throws {
        // A file kept across many short runs (compose keeps it in a named volume) must not grow
        // without bound: 12,000 inert events, 6,000 per run, are more than the newest 10,000.
        let path = newPath()
        for target: UInt64 in [6_000, 12_000] {
            let server = try startFrozenMock { $0.statePath = path }
            try await recordInertEvents(server.domain, until: target)
            await server.stop()
        }
        let archive = try jsonObject(Array(try StateArchive.export(path: path).utf8))
        let sequences = try XCTUnwrap(archive["events"]?.arrayValue).compactMap { $0.objectValue?["sequence"]?.intValue }
        XCTAssertEqual(sequences.last, 12_000)
        XCTAssertEqual(sequences.count, 10_000, "inert events older than the newest 10,000 are still in the file")
    }

    func testRestart_SignsWithTheStoredKeys_WithoutReadingTheKeysDirectory() async throws {
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        let kids = try publishedKeyIDs(first)
        let signer = first.domain.signingKeyID
        await first.stop()
        // A keys directory that does not exist: read at a first start, it refuses; a restart
        // takes its keys from the state file and never looks.
        let missing = "/nonexistent-\(UUID().uuidString)"
        let again = try startFrozenMock { $0.statePath = path; $0.keysDirectory = missing }
        XCTAssertEqual(try publishedKeyIDs(again), kids)
        XCTAssertEqual(again.domain.signingKeyID, signer)
        await again.stop()
        XCTAssertThrowsError(try startFrozenMock { $0.statePath = newPath(); $0.keysDirectory = missing }) { error in
            guard case AppleIDMockError.keys(.directoryMissing(missing))? = error as? AppleIDMockError else {
                return XCTFail("expected the missing keys directory, got \(error)")
            }
        }
    }

    func testStart_TakesAFileMadeButNeverBegun_AsANewState() async throws {
        // A start that stopped between making the file and writing its beginning.
        let path = newPath()
        try StateFile(path: path, scenarioJSON: Scenario.default.prettyJSON).close()
        let server = try startMock { $0.statePath = path }
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        await server.stop()
        let restarted = try startMock { $0.statePath = path }
        XCTAssertEqual(restarted.domain.lastEventSequence, 0)
        await restarted.stop()
        // Its twin: no beginning but events is a damaged file, refused.
        let damaged = newPath()
        let file = try StateFile(path: damaged, scenarioJSON: Scenario.default.prettyJSON)
        try file.write(StateBatch(events: [RecordedEvent(sequence: 1, at: 0, event: .accountDeleted(userID: "alice"))]))
        file.close()
        XCTAssertThrowsError(try startMock { $0.statePath = damaged }) { error in
            guard case AppleIDMockError.state(let refusal)? = error as? AppleIDMockError else { return XCTFail("\(error)") }
            XCTAssertEqual(refusal.problem, .damaged("no genesis record"))
        }
    }

    /// The key IDs of `/auth/keys` in the order served (under `--seed`, from the seed's stream).
    func servedKeyOrder(_ server: AppleIDMockServer, fetches: Int) throws -> [[String]] {
        try (0..<fetches).map { _ in
            let keys = try XCTUnwrap(try jsonObject(try server.get("/auth/keys").body)["keys"]?.arrayValue)
            return keys.compactMap { $0.objectValue?["kid"]?.stringValue }
        }
    }

    func testRestart_GoesOnWithTheSeededKeyOrders_WhereTheStopLeftThem() async throws {
        // One seeded mock serving eighteen fetches is the reference.
        let reference = try startFrozenMock { $0.seed = 11 }
        let orders = try servedKeyOrder(reference, fetches: 18)
        await reference.stop()
        XCTAssertNotEqual(Array(orders[0..<6]), Array(orders[6..<12]), "the stream gives other orders as it goes")
        let path = newPath()
        let first = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(first, fetches: 6), Array(orders[0..<6]), "a state file changes nothing in a seeded run")
        await first.stop()
        let second = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(second, fetches: 6), Array(orders[6..<12]), "the orders go on where the stop left them")
        await second.stop()
        // Exported and imported, the place goes with the state.
        let archive = try StateArchive.export(path: path)
        XCTAssertNotNil(try jsonObject(Array(archive.utf8))["jwks_order"]?.objectValue)
        let imported = newPath("imported")
        try StateArchive.importing(Array(archive.utf8), into: imported)
        let third = try startFrozenMock { $0.seed = 11; $0.statePath = imported }
        XCTAssertEqual(try servedKeyOrder(third, fetches: 6), Array(orders[12..<18]))
        await third.stop()
        // The twin, without a state file: a restarted seeded mock begins the orders again.
        let fresh = try startFrozenMock { $0.seed = 11 }
        XCTAssertEqual(try servedKeyOrder(fresh, fetches: 6), Array(orders[0..<6]))
        await fresh.stop()
    }

    func testKill_RepeatsTheSeededKeyOrders_SinceTheLastCommit() async throws {
        let reference = try startFrozenMock { $0.seed = 12 }
        let orders = try servedKeyOrder(reference, fetches: 9)
        await reference.stop()
        let path = newPath()
        let running = try startFrozenMock { $0.seed = 12; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(running, fetches: 3), Array(orders[0..<3]))
        // A sign-in commits, and the key orders' place with it; the three fetches after it write nothing.
        XCTAssertEqual(try running.nativeSignIn().status, 200)
        XCTAssertEqual(try servedKeyOrder(running, fetches: 3), Array(orders[3..<6]))
        let killed = try handedOver(path)
        await running.stop()
        let afterKill = try startFrozenMock { $0.seed = 12; $0.statePath = killed }
        XCTAssertEqual(try servedKeyOrder(afterKill, fetches: 3), Array(orders[3..<6]), "the orders since the last commit come again")
        await afterKill.stop()
        // Its twin: the mock stopped, not killed, committed the place at its stop.
        let afterStop = try startFrozenMock { $0.seed = 12; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(afterStop, fetches: 3), Array(orders[6..<9]))
        await afterStop.stop()
    }

    func testKeyOrderPlace_IsKeptForItsOwnSeedOnly() async throws {
        // An unseeded run stores no place (its orders come from entropy).
        let unseeded = newPath()
        let plain = try startFrozenMock { $0.statePath = unseeded }
        _ = try servedKeyOrder(plain, fetches: 2)
        await plain.stop()
        XCTAssertEqual(try jsonObject(Array(try StateArchive.export(path: unseeded).utf8))["jwks_order"], .null)
        // A file seeded with 11, restarted with 13: seed 13's orders from their start.
        let reference = try startFrozenMock { $0.seed = 13 }
        let orders = try servedKeyOrder(reference, fetches: 4)
        await reference.stop()
        let path = newPath()
        let first = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        _ = try servedKeyOrder(first, fetches: 5)
        await first.stop()
        XCTAssertNotNil(try jsonObject(Array(try StateArchive.export(path: path).utf8))["jwks_order"]?.objectValue, "the twin: seeded, it is stored")
        let reseeded = try startFrozenMock { $0.seed = 13; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(reseeded, fetches: 4), orders)
        await reseeded.stop()
    }
}
