import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Apple's own incidents as presets over the faults (`{"incident": name}`): each reproduces what
/// backends met, a backend that pins what Apple documents passes through it, and removing the
/// preset restores Apple's answers.
final class FaultIncidentTests: XCTestCase {
    /// A mock in memory with its clock frozen.
    private func frozenMock(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> InMemoryMock {
        try inMemoryMock { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            adjust(&configuration)
        }
    }

    private func incident(_ mock: InMemoryMock, _ body: String) async throws -> JSONObject {
        let answer = await mock.postJSON("/__mock/faults", body)
        XCTAssertEqual(answer.status.code, 201, answer.text)
        return try jsonObject(answer.body)
    }

    func testDiscoveryIssuerFlip_NamesAccountAppleCom_WhileIDTokensKeepAppleIDsIssuer_UntilRemoved() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        let before = await mock.get("/.well-known/openid-configuration")
        let installed = try await incident(mock, #"{"incident":"discovery-issuer-flip"}"#)
        XCTAssertEqual(installed["incident"], "discovery-issuer-flip")
        let faults = try XCTUnwrap(installed["faults"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(faults.map { $0["incident"] }, ["discovery-issuer-flip"])
        XCTAssertEqual(faults.map { $0["path"] }, ["/.well-known/openid-configuration"])

        // Apple's discovery redirected; the mock's goes to its stand-in for account.apple.com's document.
        let redirected = await mock.get("/.well-known/openid-configuration")
        XCTAssertEqual(redirected.status.code, 302)
        XCTAssertEqual(redirected.headers["Location"], "/account.apple.com/.well-known/openid-configuration")
        XCTAssertEqual(redirected.body, [])
        let flipped = await mock.get("/account.apple.com/.well-known/openid-configuration")
        XCTAssertEqual(flipped.status.code, 200)
        XCTAssertEqual(flipped.headers["Content-Type"], "application/json;charset=UTF-8")
        XCTAssertEqual(flipped.headers["Server"], "Apple")
        let document = try jsonObject(flipped.body)
        XCTAssertEqual(document["issuer"], "https://account.apple.com")
        // Its endpoints are the mock's, where the unflipped document has them: no host a test cannot reach.
        let unflipped = try jsonObject(before.body)
        for endpoint in ["authorization_endpoint", "token_endpoint", "revocation_endpoint", "jwks_uri"] {
            XCTAssertEqual(document[endpoint], unflipped[endpoint], endpoint)
        }
        XCTAssertEqual(document.keys, try jsonObject(before.body).keys, "the same document, key for key")
        // The tokens did not move: iss stays Apple's documented issuer.
        let token = await mock.postJSON("/__mock/id-token", #"{"user":"alice","client_id":"com.example.app"}"#)
        let claims = try XCTUnwrap(try CompactJWS.parse(try XCTUnwrap(try jsonObject(token.body)["id_token"]?.stringValue)).payloadJSON)
        XCTAssertEqual(claims["iss"], "https://appleid.apple.com")

        // Removing the preset restores Apple's answer byte for byte.
        let removedFlip = await mock.respond(.delete, "/__mock/faults?incident=discovery-issuer-flip")
        XCTAssertEqual(removedFlip.text, #"{"removed":1}"#)
        let restored = await mock.get("/.well-known/openid-configuration")
        XCTAssertEqual(restored.status.code, 200)
        XCTAssertEqual(restored.body, before.body)
    }

    func testJWKSWithoutSigningKey_LeavesOutTheKidThatSigns_EvenAfterARotation() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        _ = try await incident(mock, #"{"incident":"jwks-without-signing-key"}"#)
        func kids() async throws -> [String] {
            let answer = await mock.get("/auth/keys")
            return try XCTUnwrap(try jsonObject(answer.body)["keys"]?.arrayValue).compactMap { $0.objectValue?["kid"]?.stringValue }
        }
        let first = try await kids()
        XCTAssertEqual(first.sorted(), ["Ymq4vB9xTz", "r8TcNf3QsJ"], "the signing kid W2ek7HdPaL is missing")
        let rotation = await mock.postJSON("/__mock/keys/rotate", "")
        let newKid = try XCTUnwrap(try jsonObject(rotation.body)["kid"]?.stringValue)
        let afterRotation = try await kids()
        XCTAssertFalse(afterRotation.contains(newKid), "the new signer is missing after a rotation")
        XCTAssertTrue(afterRotation.contains("W2ek7HdPaL"), "the previous signer is back once it no longer signs")
        // The twin: removed, every published key is there.
        let removed = await mock.respond(.delete, "/__mock/faults")
        XCTAssertEqual(removed.text, #"{"removed":1}"#)
        let all = try await kids()
        XCTAssertEqual(all.sorted(), (first + ["W2ek7HdPaL", newKid]).sorted())
    }

    func testTokenEndpointOutage_Answers503HTMLForItsMinutesOfMockTime_ThenAppleAnswersAgain() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        let installed = try await incident(mock, #"{"incident":"token-endpoint-outage","minutes":2}"#)
        let fault = try XCTUnwrap(installed["faults"]?.arrayValue?.first?.objectValue)
        XCTAssertEqual(fault["for_seconds"], .int(120))
        XCTAssertEqual(fault["until"], "2023-11-14T22:15:20Z")
        let form = Array("grant_type=client_credentials&client_id=com.example.web".utf8)
        let headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        let down = await mock.respond(.post, "/auth/token", headers: headers, body: form)
        XCTAssertEqual(down.status.code, 503)
        XCTAssertEqual(down.headers["Content-Type"], "text/html; charset=utf-8")
        XCTAssertTrue(down.text.hasPrefix("<html>"), down.text)
        let moved = await mock.postJSON("/__mock/clock", #"{"advance":119}"#)
        XCTAssertEqual(moved.status.code, 200)
        let stillDown = await mock.respond(.post, "/auth/token", headers: headers, body: form)
        XCTAssertEqual(stillDown.status.code, 503)
        // Two minutes of mock time later Apple answers again (no client_secret: invalid_client).
        let movedAgain = await mock.postJSON("/__mock/clock", #"{"advance":1}"#)
        XCTAssertEqual(movedAgain.status.code, 200)
        let up = await mock.respond(.post, "/auth/token", headers: headers, body: form)
        XCTAssertEqual(up.status.code, 400)
        XCTAssertEqual(up.text, #"{"error":"invalid_client"}"#)
        // Its time over, the fault ended as an event: no longer listed, and moving the clock back does not revive it (probe Q5).
        let listing = await mock.get("/__mock/faults")
        XCTAssertEqual(try jsonObject(listing.body)["faults"], .array([]))
        let feed = await mock.get("/__mock/events?type=faults-removed")
        XCTAssertEqual(try jsonObject(feed.body)["events"]?.arrayValue?.compactMap { $0.objectValue?["faults"] }, [.array(["f1"])])
        let back = await mock.postJSON("/__mock/clock", #"{"advance":-120}"#)
        XCTAssertEqual(back.status.code, 200)
        let stillUp = await mock.respond(.post, "/auth/token", headers: headers, body: form)
        XCTAssertEqual(stillUp.status.code, 400)
        XCTAssertEqual(stillUp.text, #"{"error":"invalid_client"}"#)
    }

    func testTimedFault_IsListedWhileItActs_AndEndsWhenItsTimeIsOver_EvenWithoutARequest() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        let installed = await mock.postJSON("/__mock/faults", #"{"path":"/auth/keys","action":"respond","status":503,"for_seconds":60}"#)
        XCTAssertEqual(installed.status.code, 201, installed.text)
        func listed() async throws -> JSONValue? { try jsonObject(await mock.get("/__mock/faults").body)["faults"] }
        func keysStatus() async -> Int { await mock.get("/auth/keys").status.code }
        _ = await mock.postJSON("/__mock/clock", #"{"advance":59}"#)
        let acting = try await listed()
        XCTAssertEqual(acting?.arrayValue?.count, 1)
        let down = await keysStatus()
        XCTAssertEqual(down, 503)
        _ = await mock.postJSON("/__mock/clock", #"{"advance":1}"#)
        let ended = try await listed()
        XCTAssertEqual(ended, .array([]))
        let up = await keysStatus()
        XCTAssertEqual(up, 200)
        _ = await mock.postJSON("/__mock/clock", #"{"advance":-60}"#)
        let back = await keysStatus()
        XCTAssertEqual(back, 200)
    }

    func testNotificationsOnce_AttemptsOnce_WhereTheTwinRetries() async throws {
        for once in [true, false] {
            let transport = RecordingTransport(status: 500)
            let mock = try frozenMock { configuration in
                configuration.scenario.teams[0].notificationURL = "https://backend.example/apple"
                configuration.scenario.compatibility.notificationRetryDelays = [0, 0]
                configuration.notificationTransport = transport
            }
            addTeardownBlock { await mock.stop() }
            if once { _ = try await incident(mock, #"{"incident":"notifications-once"}"#) }
            let signIn = await mock.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
            XCTAssertEqual(signIn.status.code, 200)
            let fired = await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
            XCTAssertEqual(fired.status.code, 202)
            // The log holds this request in the mock until the record has settled.
            let settled = await mock.get("/__mock/notifications?after=0&wait=20")
            let record = try XCTUnwrap(try jsonObject(settled.body)["notifications"]?.arrayValue?.first?.objectValue)
            XCTAssertEqual(record["outcome"], "failed")
            XCTAssertEqual(record["attempts"]?.arrayValue?.count, once ? 1 : 3, once ? "once" : "the twin retries twice")
            XCTAssertEqual(record["fault"] != nil && record["fault"] != .null, once)
        }
    }

    func testIncidentRequests_RefuseUnknownNamesKeysAndMinutes_NamingTheField() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        let cases = [
            (#"{"incident":"apple-down"}"#, #"{"error":"expected one of discovery-issuer-flip, jwks-without-signing-key, token-endpoint-outage, notifications-once","field":"incident"}"#),
            (#"{"incident":"token-endpoint-outage","minutes":0}"#, #"{"error":"expected an integer from 1 to 525600","field":"minutes"}"#),
            (#"{"incident":"token-endpoint-outage","times":1}"#, #"{"error":"not a key of an incident (expected incident and, optionally, minutes)","field":"times"}"#),
        ]
        for (body, error) in cases {
            let answer = await mock.postJSON("/__mock/faults", body)
            XCTAssertEqual(answer.status.code, 400, body)
            XCTAssertEqual(answer.text, error, body)
        }
        let badDelete = await mock.respond(.delete, "/__mock/faults?incident=apple-down")
        XCTAssertEqual(badDelete.status.code, 400)
        XCTAssertEqual(try jsonObject(badDelete.body)["field"], "incident")
        let none = await mock.get("/__mock/faults")
        XCTAssertEqual(try jsonObject(none.body)["faults"], .array([]))
        // The twin: a known one installs.
        let known = await mock.postJSON("/__mock/faults", #"{"incident":"token-endpoint-outage","minutes":1}"#)
        XCTAssertEqual(known.status.code, 201)
    }

    func testScenarioFaults_TakeIncidents_ExpandedAndPrintedBack() throws {
        guard case .object(var top) = Scenario.default.json else { return XCTFail("the scenario is an object") }
        top["faults"] = [["incident": "token-endpoint-outage", "minutes": 3], ["incident": "notifications-once"]]
        let scenario = try Scenario.load(json: JSONWriter.compact(.object(top)))
        XCTAssertEqual(scenario.faults, FaultIncident.tokenEndpointOutage.faults(minutes: 3) + FaultIncident.notificationsOnce.faults())
        XCTAssertEqual(scenario.faults.map(\.forSeconds), [180, nil])
        XCTAssertEqual(try Scenario.load(json: Array(scenario.prettyJSON.utf8)), scenario)
        // The twins: an unknown incident and an unknown key are named with their paths.
        top["faults"] = [["incident": "apple-down"], ["incident": "notifications-once", "extra": 1]]
        XCTAssertThrowsError(try Scenario.load(json: JSONWriter.compact(.object(top)))) { error in
            XCTAssertEqual((error as? ScenarioError)?.problems.map(\.path), ["faults[0].incident", "faults[1].extra"])
        }
    }

    func testServerApple_IsOnApplesRoutesAndTheirRefusals_NotOnTheControlAPI() async throws {
        let mock = try frozenMock()
        addTeardownBlock { await mock.stop() }
        for target in ["/auth/keys", "/.well-known/openid-configuration", "/auth/authorize?client_id=nobody"] {
            let answer = await mock.get(target)
            XCTAssertEqual(answer.headers.fields.first?.name, "Server", target)
            XCTAssertEqual(answer.headers["Server"], "Apple", target)
        }
        for path in ["/auth/token", "/auth/revoke", "/auth/usermigrationinfo"] {
            let refused = await mock.respond(.post, path, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("client_id=x".utf8))
            XCTAssertEqual(refused.status.code, 400, path)
            XCTAssertEqual(refused.headers.fields.map(\.name), ["Server", "Content-Type", "Cache-Control", "Pragma"], path)
            XCTAssertEqual(refused.headers["Server"], "Apple", path)
        }
        // The twins: the control API and MiniHTTP's own 404 name no server.
        let health = await mock.get("/__mock/health")
        XCTAssertNil(health.headers["Server"])
        let missing = await mock.get("/auth/nothing")
        XCTAssertNil(missing.headers["Server"])
        // A fault that names its own server keeps it.
        _ = await mock.postJSON("/__mock/faults", #"{"path":"/auth/keys","action":"respond","status":502,"headers":{"Server":"AkamaiGHost"},"body":""}"#)
        let faulted = await mock.get("/auth/keys")
        XCTAssertEqual(faulted.headers.values("Server"), ["AkamaiGHost"])
    }
}
