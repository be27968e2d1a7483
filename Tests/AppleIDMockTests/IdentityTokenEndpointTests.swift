import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/id-token`, driven in memory: the token's bytes need no socket.
final class IdentityTokenEndpointTests: XCTestCase {
    private func post(_ mock: any MockClient, _ body: String) async throws -> MockAnswer {
        try await mock.postJSON("/__mock/id-token", body)
    }

    func testIdentityToken_MintsVerifiableTokenWithApplesHeaderAndClaims() async throws {
        let mock = try startClient { $0.scenario.clock = .init(start: 1_700_000_000, frozen: true) }
        let response = try await post(mock, #"{"user":"alice","client_id":"com.example.app","nonce":"abc"}"#)
        XCTAssertEqual(response.status, 200)
        let answer = try jsonObject(response.body)
        let token = try CompactJWS.parse(try XCTUnwrap(answer["id_token"]?.stringValue))
        XCTAssertEqual(token.headerSegment, Base64URL.encode(Array(#"{"kid":"W2ek7HdPaL","alg":"RS256"}"#.utf8)))
        let published = try await mock.publishedKeys()
        let key = try XCTUnwrap(published.key(withID: "W2ek7HdPaL"))
        XCTAssertTrue(token.verifyRS256(with: try key.rsaPublicKey()))
        let sub = Identity.subject(teamID: "MOCKTEAM01", userID: "alice")
        XCTAssertEqual(String(decoding: token.payload, as: UTF8.self),
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1700086400,"iat":1700000000,"sub":"\#(sub)","nonce":"abc","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true}"#)
        XCTAssertEqual(answer["sub"], .string(sub))
    }

    func testIdentityToken_HiddenEmailIsRelayAddressWithPrivateClaim() async throws {
        let mock = try startClient { $0.scenario.compatibility.isPrivateEmail = .string }
        let answer = try jsonObject(try await post(mock, #"{"user":"bob"}"#).body)
        let token = try CompactJWS.parse(try XCTUnwrap(answer["id_token"]?.stringValue))
        let claims = try XCTUnwrap(token.payloadJSON)
        XCTAssertEqual(claims["email"], .string(Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob")))
        XCTAssertEqual(claims["is_private_email"], "true")
        XCTAssertEqual(claims["email_verified"], true)
    }

    func testIdentityToken_RelayDomain_ByKnobOrUser_OnEachOfTheThree_PrivateOnEach() async throws {
        // Today's Apple issues on privaterelay.appleid.com (the knob's default, set here
        // explicitly); a user's own relay_domain wins over the knob: private.icloud.com, where
        // Apple moves new ones, or icloud.com, which newer docs also name (§6).
        var document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(Scenario.default.prettyJSON.utf8)) as? [String: Any])
        var compatibility = try XCTUnwrap(document["compatibility"] as? [String: Any])
        compatibility["relay_domain"] = "privaterelay.appleid.com"
        document["compatibility"] = compatibility
        document["users"] = [["id": "bob", "email": "bob@example.com", "hide_email": true],
                             ["id": "carol", "email": "carol@example.com", "hide_email": true, "relay_domain": "private.icloud.com"],
                             ["id": "dave", "email": "dave@icloud.com", "hide_email": true, "relay_domain": "icloud.com"]]
        let scenario = try Scenario.load(json: Array(try JSONSerialization.data(withJSONObject: document)))
        XCTAssertEqual(scenario.users.map(\.relayDomain), [.privateRelayAppleID, .privateICloud, .iCloud])
        let mock = try startClient { $0.scenario = scenario }
        for (user, domain) in [("bob", "privaterelay.appleid.com"), ("carol", "private.icloud.com"), ("dave", "icloud.com")] {
            let answer = try jsonObject(try await post(mock, #"{"user":"\#(user)"}"#).body)
            let claims = try XCTUnwrap(try CompactJWS.parse(try XCTUnwrap(answer["id_token"]?.stringValue)).payloadJSON)
            XCTAssertEqual(claims["email"], .string(Identity.relayAddress(teamID: "MOCKTEAM01", userID: user, domain: RelayDomain(rawValue: domain)!)))
            XCTAssertTrue(claims["email"]?.stringValue?.hasSuffix("@" + domain) == true, user)
            XCTAssertEqual(claims["is_private_email"], true, user)
        }
        // The twins: a real address is not private, on icloud.com too (dave's own); a domain that
        // only looks like a relay one is no relay domain.
        XCTAssertTrue(Identity.isRelayAddress("x8sqp2dgvv@PRIVATE.icloud.com"))
        XCTAssertFalse(Identity.isRelayAddress("x8sqp2dgvv@private.icloud.com.example"))
        let own = try jsonObject(try await post(mock, #"{"user":"dave","hide_email":false}"#).body)
        let ownClaims = try XCTUnwrap(try CompactJWS.parse(try XCTUnwrap(own["id_token"]?.stringValue)).payloadJSON)
        XCTAssertEqual(ownClaims["email"], "dave@icloud.com")
        XCTAssertNil(ownClaims["is_private_email"])
        let plain = try jsonObject(try await post(mock, #"{"user":"bob","hide_email":false}"#).body)
        let plainClaims = try XCTUnwrap(try CompactJWS.parse(try XCTUnwrap(plain["id_token"]?.stringValue)).payloadJSON)
        XCTAssertEqual(plainClaims["email"], "bob@example.com")
        XCTAssertNil(plainClaims["is_private_email"])
        // A bad value is refused at its path.
        document["users"] = [["id": "u", "email": "u@example.com", "relay_domain": "apple.com"]]
        XCTAssertThrowsError(try Scenario.load(json: Array(try JSONSerialization.data(withJSONObject: document)))) { error in
            XCTAssertTrue(String(describing: error).contains("users[0].relay_domain"), String(describing: error))
        }
    }

    func testIdentityToken_RejectsBadRequestsNamingTheField() async throws {
        let mock = try startClient()
        let cases: [(String, String)] = [
            (#"{"user":"mallory"}"#, #"{"error":"no user \"mallory\" in the scenario","field":"user"}"#),
            (#"{}"#, #"{"error":"missing required field","field":"user"}"#),
            (#"{"user":5}"#, #"{"error":"expected a string","field":"user"}"#),
            (#"{"user":"alice","client_id":"com.nope"}"#, #"{"error":"no client \"com.nope\" in the scenario","field":"client_id"}"#),
            (#"{"user":"alice","colour":"red"}"#, #"{"error":"unknown field (expected one of: user, client_id, nonce, hide_email)","field":"colour"}"#),
            (#"{"user":"#, #"{"error":"body is not valid JSON","field":null}"#),
        ]
        for (body, expected) in cases {
            let response = try await post(mock, body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(response.text, expected, body)
        }
    }

    func testIdentity_SubjectAndRelayHaveApplesFormats_StablePerTeam() {
        let sub = Identity.subject(teamID: "MOCKTEAM01", userID: "alice")
        XCTAssertNotNil(sub.range(of: #"^[0-9]{6}\.[0-9a-f]{32}\.[0-9]{4}$"#, options: .regularExpression), sub)
        XCTAssertEqual(sub, Identity.subject(teamID: "MOCKTEAM01", userID: "alice"))
        XCTAssertNotEqual(sub, Identity.subject(teamID: "OTHERTEAM1", userID: "alice"))
        XCTAssertNotEqual(sub, Identity.subject(teamID: "MOCKTEAM01", userID: "bob"))
        let relay = Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob")
        XCTAssertNotNil(relay.range(of: relayPattern, options: .regularExpression), relay)
        XCTAssertNotEqual(relay, Identity.relayAddress(teamID: "OTHERTEAM1", userID: "bob"))
    }
}
