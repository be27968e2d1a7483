import AppleIDMock
import JOSE
import MiniHTTPTesting
import XCTest

final class IdentityTokenEndpointTests: XCTestCase {
    private func post(_ server: AppleIDMockServer, _ body: String) throws -> RawHTTPResponse {
        try RawHTTPClient(port: server.port).roundTrip("POST", "/__mock/id-token", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    func testIdentityToken_MintsVerifiableTokenWithApplesHeaderAndClaims() throws {
        let server = try startMock { $0.scenario.clock = .init(start: 1_700_000_000, frozen: true) }
        defer { server.stop() }
        let response = try post(server, #"{"user":"alice","client_id":"com.example.app","nonce":"abc"}"#)
        XCTAssertEqual(response.status, 200)
        let answer = try jsonObject(response.body)
        let token = try CompactJWS.parse(try XCTUnwrap(answer["id_token"]?.stringValue))
        XCTAssertEqual(token.headerSegment, Base64URL.encode(Array(#"{"kid":"W2ek7HdPaL","alg":"RS256"}"#.utf8)))
        let key = try XCTUnwrap(server.domain.state.publicKey(keyID: "W2ek7HdPaL"))
        XCTAssertTrue(token.verifyRS256(with: key))
        let sub = Identity.subject(teamID: "MOCKTEAM01", userID: "alice")
        XCTAssertEqual(String(decoding: token.payload, as: UTF8.self),
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1700086400,"iat":1700000000,"sub":"\#(sub)","nonce":"abc","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true}"#)
        XCTAssertEqual(answer["sub"], .string(sub))
    }

    func testIdentityToken_HiddenEmailIsRelayAddressWithPrivateClaim() throws {
        let server = try startMock { $0.scenario.compatibility.isPrivateEmail = .string }
        defer { server.stop() }
        let answer = try jsonObject(try post(server, #"{"user":"bob"}"#).body)
        let token = try CompactJWS.parse(try XCTUnwrap(answer["id_token"]?.stringValue))
        let claims = try XCTUnwrap(token.payloadJSON)
        XCTAssertEqual(claims["email"], .string(Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob")))
        XCTAssertEqual(claims["is_private_email"], "true")
        XCTAssertEqual(claims["email_verified"], true)
    }

    func testIdentityToken_RejectsBadRequestsNamingTheField() throws {
        let server = try startMock()
        defer { server.stop() }
        let cases: [(String, String)] = [
            (#"{"user":"mallory"}"#, #"{"error":"no user \"mallory\" in the scenario","field":"user"}"#),
            (#"{}"#, #"{"error":"missing required field","field":"user"}"#),
            (#"{"user":5}"#, #"{"error":"expected a string","field":"user"}"#),
            (#"{"user":"alice","client_id":"com.nope"}"#, #"{"error":"no client \"com.nope\" in the scenario","field":"client_id"}"#),
            (#"{"user":"alice","colour":"red"}"#, #"{"error":"unknown field (expected one of: user, client_id, nonce, hide_email)","field":"colour"}"#),
            (#"{"user":"#, #"{"error":"body is not valid JSON","field":null}"#),
        ]
        for (body, expected) in cases {
            let response = try post(server, body)
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
        XCTAssertNotNil(relay.range(of: #"^[a-z0-9]{10}@privaterelay\.appleid\.com$"#, options: .regularExpression), relay)
        XCTAssertNotEqual(relay, Identity.relayAddress(teamID: "OTHERTEAM1", userID: "bob"))
    }
}
