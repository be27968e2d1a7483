import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Every client_secret fault is `400 {"error":"invalid_client"}` with no description
/// (docs/apple-behaviour.md §3); each rejected secret has an accepted twin differing in one point.
final class ClientSecretRulesTests: XCTestCase {
    private let invalidClient = #"{"error":"invalid_client"}"#

    /// A client_credentials request for `clientID` authenticated by `secret`.
    private func post(_ mock: any MockClient, secret: String?, clientID: String = "com.example.web") async throws -> MockAnswer {
        var pairs = [("client_id", clientID)]
        if let secret { pairs.append(("client_secret", secret)) }
        pairs += [("grant_type", "client_credentials"), ("scope", "user.migration")]
        return try await mock.postForm("/auth/token", pairs)
    }

    private func assertAccepted(_ mock: any MockClient, _ secret: String, clientID: String = "com.example.web",
                                file: StaticString = #filePath, line: UInt = #line) async throws {
        try assertTokenAnswer(try await post(mock, secret: secret, clientID: clientID), keys: ["access_token", "token_type", "expires_in"],
                              file: file, line: line)
    }

    private func assertRejected(_ mock: any MockClient, _ secret: String?, clientID: String = "com.example.web",
                                file: StaticString = #filePath, line: UInt = #line) async throws {
        assertAppleError(try await post(mock, secret: secret, clientID: clientID), invalidClient, file: file, line: line)
    }

    func testClientSecret_Accepted_ForBothClientsOfTheTeam() async throws {
        let mock = try frozenClient()
        try await assertAccepted(mock, try await mock.secret("com.example.web"))
        try await assertAccepted(mock, try await mock.secret("com.example.app"), clientID: "com.example.app")
        // A secret already accepted (its signature remembered) still binds its subject.
        let web = try await mock.secret("com.example.web")
        try await assertAccepted(mock, web)
        try await assertRejected(mock, web, clientID: "com.example.app")
        try await assertAccepted(mock, web)
    }

    func testClientSecret_RejectsUnknownKeyID() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(keyID: "MOCKKEY002"))
        try await assertRejected(mock, try await mock.secret(keyID: "mockkey001"))
        try await assertAccepted(mock, try await mock.secret(keyID: "MOCKKEY001"))
    }

    func testClientSecret_AcceptsTypHeader() async throws {
        let mock = try frozenClient()
        let good = try CompactJWS.parse(try await mock.secret())
        let header = JSONObject([("alg", "ES256"), ("kid", "MOCKKEY001"), ("typ", "JWT")])
        let unsigned = CompactJWS(header: header, payload: good.payload, signature: [])
        try await assertAccepted(mock, CompactJWS(header: header, payload: good.payload,
                                              signature: try mockDeveloperKey.signES256(unsigned.signingInput)).compact)
        // Twin: the same header with a critical extension nobody understands.
        let critical = JSONObject([("alg", "ES256"), ("kid", "MOCKKEY001"), ("crit", ["exp"])])
        let unsignedCritical = CompactJWS(header: critical, payload: good.payload, signature: [])
        try await assertRejected(mock, CompactJWS(header: critical, payload: good.payload,
                                              signature: try mockDeveloperKey.signES256(unsignedCritical.signingInput)).compact)
    }

    func testClientSecret_RejectsAnotherTeamsKeyAndIssuer() async throws {
        let teamBKey = try P256PrivateKey.generate()
        let pem = try teamBKey.publicKey.pem
        let mock = try frozenClient { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: "MOCKTEAM02", developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002", publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: "com.teamb.app", kind: .appID)]))
        }
        // Team B's registered key cannot sign for team A's client, whatever iss says.
        try await assertRejected(mock, try await mock.secret("com.example.web", teamID: "MOCKTEAM01", keyID: "MOCKKEY002", key: teamBKey))
        try await assertRejected(mock, try await mock.secret("com.example.web", teamID: "MOCKTEAM02", keyID: "MOCKKEY002", key: teamBKey))
        // And team A's key cannot sign for team B's client.
        try await assertRejected(mock, try await mock.secret("com.teamb.app", teamID: "MOCKTEAM02", keyID: "MOCKKEY001", key: mockDeveloperKey),
                           clientID: "com.teamb.app")
        try await assertAccepted(mock, try await mock.secret("com.teamb.app", teamID: "MOCKTEAM02", keyID: "MOCKKEY002", key: teamBKey),
                           clientID: "com.teamb.app")
    }

    func testClientSecret_RejectsMissingKeyID() async throws {
        let mock = try frozenClient()
        let good = try CompactJWS.parse(try await mock.secret())
        var header = JSONObject()
        header["alg"] = "ES256"
        let unsigned = CompactJWS(header: header, payload: good.payload, signature: [])
        let signed = CompactJWS(header: header, payload: good.payload, signature: try mockDeveloperKey.signES256(unsigned.signingInput))
        try await assertRejected(mock, signed.compact)
        try await assertAccepted(mock, good.compact)
    }

    func testClientSecret_RejectsSignatureByAnotherKey() async throws {
        let mock = try frozenClient()
        let stranger = try P256PrivateKey.generate()
        try await assertRejected(mock, try await mock.secret(key: stranger))
        // A flipped bit in an otherwise good signature.
        let good = try CompactJWS.parse(try await mock.secret())
        var signature = good.signature
        signature[10] ^= 0x01
        try await assertRejected(mock, CompactJWS(header: good.header, payload: good.payload, signature: signature).compact)
        // Twin: reassembled from the same parts with the untouched signature, it passes.
        try await assertAccepted(mock, CompactJWS(header: good.header, payload: good.payload, signature: good.signature).compact)
    }

    func testClientSecret_RejectsDERSignature() async throws {
        let mock = try frozenClient()
        let good = try CompactJWS.parse(try await mock.secret())
        XCTAssertEqual(good.signature.count, 64)
        let der = derSignature(fromRaw: good.signature)
        XCTAssertEqual(der[0], 0x30)
        XCTAssertGreaterThanOrEqual(der.count, 70)
        let derToken = CompactJWS(header: good.header, payload: good.payload, signature: der)
        XCTAssertEqual(derToken.headerSegment, good.headerSegment, "same header bytes, only the signature encoding differs")
        try await assertRejected(mock, derToken.compact)
        try await assertAccepted(mock, CompactJWS(header: good.header, payload: good.payload, signature: good.signature).compact)
    }

    func testClientSecret_RejectsWrongIssuer() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(teamID: "OTHERTEAM1"))
        try await assertRejected(mock, try await mock.secret(teamID: "mockteam01"))
        try await assertAccepted(mock, try await mock.secret(teamID: "MOCKTEAM01"))
    }

    func testClientSecret_RejectsSubjectOtherThanTheClientID() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret("com.example.app"), clientID: "com.example.web")
        try await assertRejected(mock, try await mock.secret("COM.EXAMPLE.WEB"), clientID: "com.example.web")
        try await assertAccepted(mock, try await mock.secret("com.example.web"), clientID: "com.example.web")
    }

    func testClientSecret_RejectsWrongAudience() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(audience: "https://appleid.apple.com/"))
        try await assertRejected(mock, try await mock.secret(audience: "appleid.apple.com"))
        try await assertAccepted(mock, try await mock.secret(audience: "https://appleid.apple.com"))
    }

    func testClientSecret_RejectsExpired_AcceptsOneSecondBefore() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(issuedAt: frozenNow - 3600, lifetime: 3600)) // exp == now
        try await assertRejected(mock, try await mock.secret(issuedAt: frozenNow - 7200, lifetime: 3600))
        try await assertAccepted(mock, try await mock.secret(issuedAt: frozenNow - 3600, lifetime: 3601))
        // A secret that was fine goes bad once the clock passes its exp.
        let secret = try await mock.secret(lifetime: 60)
        try await assertAccepted(mock, secret)
        try await mock.advanceClock(by: 60)
        try await assertRejected(mock, secret)
    }

    func testClientSecret_RejectsExpMoreThan15777000SecondsAhead() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(lifetime: 15_777_001))
        try await assertAccepted(mock, try await mock.secret(lifetime: 15_777_000))
        // Measured from the mock's now, not from iat.
        try await assertAccepted(mock, try await mock.secret(issuedAt: frozenNow - 100, lifetime: 15_777_100))
        try await assertRejected(mock, try await mock.secret(issuedAt: frozenNow - 100, lifetime: 15_777_101))
    }

    func testClientSecret_RejectsIssuedAtInTheFuture_AcceptsNow() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, try await mock.secret(issuedAt: frozenNow + 1))
        try await assertAccepted(mock, try await mock.secret(issuedAt: frozenNow))
    }

    func testClientSecret_AcceptsIssuedAtWithinConfiguredLeeway() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.clientSecretIATLeeway = 5 }
        try await assertAccepted(mock, try await mock.secret(issuedAt: frozenNow + 5))
        try await assertRejected(mock, try await mock.secret(issuedAt: frozenNow + 6))
    }

    func testClientSecret_RejectsHS256() async throws {
        let mock = try frozenClient()
        let good = try CompactJWS.parse(try await mock.secret())
        let header = JSONObject([("alg", "HS256"), ("kid", "MOCKKEY001")])
        let unsigned = CompactJWS(header: header, payload: good.payload, signature: [])
        // Keyed with the public key's PEM: the classic algorithm-confusion attempt.
        let mac = HMACSHA256.mac(key: Array(try mockDeveloperKey.publicKey.pem.utf8), message: unsigned.signingInput)
        try await assertRejected(mock, CompactJWS(header: header, payload: good.payload, signature: mac).compact)
        let none = JSONObject([("alg", "none"), ("kid", "MOCKKEY001")])
        try await assertRejected(mock, CompactJWS(header: none, payload: good.payload, signature: []).compact)
        try await assertAccepted(mock, good.compact)
    }

    func testClientSecret_RejectsMissingSecretAndUnknownClient() async throws {
        let mock = try frozenClient()
        try await assertRejected(mock, nil)
        try await assertRejected(mock, "")
        try await assertRejected(mock, "not.a.jwt")
        try await assertRejected(mock, try await mock.secret("com.example.nope"), clientID: "com.example.nope")
        let noClient = try await mock.postForm("/auth/token", [("client_secret", try await mock.secret()), ("grant_type", "client_credentials"),
                                                            ("scope", "user.migration")])
        assertAppleError(noClient, invalidClient)
        try await assertAccepted(mock, try await mock.secret())
    }

    func testTokenEndpoint_JSONBodyErrorKnob_AnswersTN3107sInvalidRequest() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.tokenJSONBodyError = "invalid_request" }
        let form = HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("grant_type", "client_credentials"),
                                    ("scope", "user.migration")])
        let json = try await mock.send("POST", "/auth/token", headers: [("Content-Type", "application/json")], body: Array(form.utf8))
        assertAppleError(json, #"{"error":"invalid_request"}"#)
        let twin = try await mock.send("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        XCTAssertEqual(twin.status, 200, twin.text)
    }

    func testClientSecret_RejectsJSONBody_AcceptsFormWithCharset() async throws {
        let mock = try frozenClient()
        let secret = try await mock.secret()
        let json = #"{"client_id":"com.example.web","client_secret":"\#(secret)","grant_type":"client_credentials","scope":"user.migration"}"#
        // A JSON body is invalid_client as observed at Apple (§1.3 [O]; the default of token_json_body_error).
        let jsonResponse = try await mock.send("POST", "/auth/token", headers: [("Content-Type", "application/json")], body: Array(json.utf8))
        assertAppleError(jsonResponse, invalidClient)
        // Form bytes labelled as JSON are JSON by their label; labelled as text, as multipart or
        // not labelled they are still refused, with TN3107's invalid_request: the media type decides.
        let form = HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", secret), ("grant_type", "client_credentials"),
                                    ("scope", "user.migration")])
        assertAppleError(try await mock.send("POST", "/auth/token", headers: [("Content-Type", "application/json")], body: Array(form.utf8)),
                         invalidClient)
        for type in ["text/plain", "multipart/form-data; boundary=x"] {
            let mislabelled = try await mock.send("POST", "/auth/token", headers: [("Content-Type", type)], body: Array(form.utf8))
            assertAppleError(mislabelled, #"{"error":"invalid_request"}"#)
        }
        assertAppleError(try await mock.send("POST", "/auth/token", body: Array(form.utf8)), #"{"error":"invalid_request"}"#)
        // Bad percent-encoding is invalid_client too (TN3107).
        let broken = try await mock.send("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                   body: Array((form + "&x=%zz").utf8))
        assertAppleError(broken, invalidClient)
        let charset = try await mock.send("POST", "/auth/token",
                                                    headers: [("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")], body: Array(form.utf8))
        try assertTokenAnswer(charset, keys: ["access_token", "token_type", "expires_in"])
    }
}
