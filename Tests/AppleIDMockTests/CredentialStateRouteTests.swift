import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `GET /__mock/credential-state` in memory, one test per state.
final class CredentialStateRouteTests: XCTestCase {
    func testCredentialStateRoute_IsNotFound_BeforeSignIn_AndForAnUnknownUser() async throws {
        let mock = try frozenClient()
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"notFound"}"#)
        assertControl(try await credentialState(mock, user: "zed"), 200, #"{"state":"notFound"}"#)
        assertControl(try await credentialState(mock, user: teamSub("zed")), 200, #"{"state":"notFound"}"#)
        // Twin: after a sign-in, the same question is answered authorized.
        assertStatus(try await mock.nativeSignIn(), 200)
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_IsAuthorized_AfterSignIn_ByIDOrSub() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        assertStatus(try await mock.nativeSignIn(user: id), 200)
        assertControl(try await credentialState(mock, user: id), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: teamSub(id)), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: id, clientID: "com.example.web"), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: "bob"), 200, #"{"state":"notFound"}"#)
    }

    func testCredentialStateRoute_IsRevoked_AfterTheAppRevokes() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
        assertStatus(try await mock.revoke(try XCTUnwrap(tokens["refresh_token"]?.stringValue)), 200)
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"revoked"}"#)
        assertControl(try await credentialState(mock, user: teamSub("alice"), clientID: "com.example.web"), 200, #"{"state":"revoked"}"#)
    }

    func testCredentialStateRoute_IsTransferred_AfterATeamTransfer() async throws {
        let mock = try startTwoTeamMock()
        assertStatus(try await mock.nativeSignIn(user: "bob"), 200)
        assertStatus(try await mock.nativeSignIn(user: "alice"), 200)
        let granted = try await mock.clientCredentials("com.example.app")
        let bearer = try XCTUnwrap(try jsonObject(granted.body)["access_token"]?.stringValue)
        let transfer = try await mock.postForm("/auth/usermigrationinfo",
                                           [("sub", teamSub("bob")), ("target", ControlFixture.teamB), ("client_id", "com.example.app"),
                                            ("client_secret", try await mock.secret("com.example.app"))],
                                           headers: [("Authorization", "Bearer \(bearer)")])
        XCTAssertEqual(transfer.status, 200, transfer.text)
        assertControl(try await credentialState(mock, user: "bob"), 200, #"{"state":"transferred"}"#)
        assertControl(try await credentialState(mock, user: teamSub("bob")), 200, #"{"state":"transferred"}"#)
        // Twin: alice was not transferred.
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_RefusesMissingUnknownAndRepeatedParameters() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.get("/__mock/credential-state?client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=&client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice"), 400, #"{"error":"missing required parameter","field":"client_id"}"#)
        assertControl(try await credentialState(mock, user: "alice", clientID: "com.nope"), 404, #"{"error":"no client \"com.nope\" in the scenario","field":"client_id"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&client_id=com.example.app&team=x"), 400,
                      #"{"error":"unknown parameter (expected user, client_id)","field":"team"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&user=bob&client_id=com.example.app"), 400,
                      #"{"error":"given more than once","field":"user"}"#)
        assertStatus(try await mock.postJSON("/__mock/credential-state", ""), 405)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&client_id=com.example.app"), 200, #"{"state":"notFound"}"#)
    }
}
