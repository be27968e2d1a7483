import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `/__mock/users` in memory: runtime users, their subs and relay addresses, and the refusals.
final class UsersRouteTests: XCTestCase {
    func testUsersRoute_ListsAPageAtATime_WithTheTotalAndTheNextOffset_AndRefusesBadPaging() async throws {
        let mock = try frozenClient()
        func page(_ query: String) async throws -> (ids: [String?], total: JSONValue?, next: JSONValue?) {
            let answer = try await mock.get("/__mock/users" + query)
            XCTAssertEqual(answer.status, 200, answer.text)
            let object = try jsonObject(answer.body)
            return (object["users"]?.arrayValue?.map { $0.objectValue?["id"]?.stringValue } ?? [], object["total"], object["next_offset"])
        }
        let all = try await page("")
        XCTAssertEqual(all.ids, ["alice", "bob", "carol"])
        XCTAssertEqual(all.total, .int(3))
        XCTAssertEqual(all.next, .null)
        let first = try await page("?limit=2")
        XCTAssertEqual(first.ids, ["alice", "bob"])
        XCTAssertEqual(first.next, .int(2))
        let second = try await page("?offset=2&limit=2")
        XCTAssertEqual(second.ids, ["carol"])
        XCTAssertEqual(second.next, .null)
        let past = try await page("?offset=7")
        XCTAssertEqual(past.ids, [])
        XCTAssertEqual(past.total, .int(3))
        assertControl(try await mock.get("/__mock/users?limit=0"), 400, #"{"error":"expected an integer from 1 to 1000","field":"limit"}"#)
        assertControl(try await mock.get("/__mock/users?limit=1001"), 400, #"{"error":"expected an integer from 1 to 1000","field":"limit"}"#)
        assertControl(try await mock.get("/__mock/users?offset=-1"), 400, #"{"error":"expected an integer from 0 to 100000","field":"offset"}"#)
        assertControl(try await mock.get("/__mock/users?page=2"), 400, #"{"error":"unknown parameter (expected offset, limit)","field":"page"}"#)
    }

    func testUsersRoute_AddsAUser_AnsweringItsSubAndRelayAddressPerTeam() async throws {
        let mock = try startTwoTeamMock()
        let id = freshUserID()
        let response = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":true,"real_user_status":1}"#)
        func team(_ teamID: String) -> String {
            #"{"relay_email":"\#(Identity.relayAddress(teamID: teamID, userID: id))","relay_forwarding":true,"sub":"\#(teamSub(id, team: teamID))","team_id":"\#(teamID)"}"#
        }
        assertControl(response, 201, #"{"deleted":false,"email":"\#(id)@example.com","family_name":"Carlson","given_name":"Carol","hide_email":true,"id":"\#(id)","real_user_status":1,"relay_domain":"privaterelay.appleid.com","teams":[\#(team("MOCKTEAM01")),\#(team(ControlFixture.teamB))]}"#)
        let teams = try XCTUnwrap(try jsonObject(response.body)["teams"]?.arrayValue)
        for entry in teams {
            XCTAssertTrue(matches(entry.objectValue?["relay_email"]?.stringValue, relayPattern))
            XCTAssertTrue(matches(entry.objectValue?["sub"]?.stringValue, #"^[0-9]{6}\.[0-9a-f]{32}\.[0-9]{4}$"#))
        }
        XCTAssertNotEqual(teams[0].objectValue?["sub"], teams[1].objectValue?["sub"])
        // Listed after the scenario's users; defaults fill what was left out.
        let other = freshUserID()
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(other)","email":"\#(other)@example.com"}"#), 201)
        let listed = try await mock.get("/__mock/users")
        XCTAssertEqual(listed.status, 200)
        let users = try XCTUnwrap(try jsonObject(listed.body)["users"]?.arrayValue).compactMap(\.objectValue)
        XCTAssertEqual(users.map { $0["id"]?.stringValue }, ["alice", "bob", "carol", id, other])
        XCTAssertEqual(users[4]["given_name"], "")
        XCTAssertEqual(users[4]["hide_email"], false)
        XCTAssertEqual(users[4]["real_user_status"], .int(2))
        XCTAssertEqual(users[4]["relay_domain"], "privaterelay.appleid.com")
        // A user on the new domain: the same local part, the new domain, in every team.
        let moved = freshUserID()
        let new = try jsonObject(try await mock.postJSON("/__mock/users", #"{"id":"\#(moved)","email":"\#(moved)@example.com","relay_domain":"private.icloud.com"}"#).body)
        XCTAssertEqual(new["relay_domain"], "private.icloud.com")
        XCTAssertEqual(new["teams"]?.arrayValue?.compactMap { $0.objectValue?["relay_email"]?.stringValue },
                       ["MOCKTEAM01", ControlFixture.teamB].map { Identity.relayAddress(teamID: $0, userID: moved, domain: .privateICloud) })
        XCTAssertTrue(Identity.relayAddress(teamID: "MOCKTEAM01", userID: moved, domain: .privateICloud).hasSuffix("@private.icloud.com"))
    }

    func testUsersRoute_RefusesDuplicateMissingAndBadFields() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"other@example.com"}"#), 409,
                      #"{"error":"a user with id \"\#(id)\" exists already","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"alice","email":"alice2@example.com"}"#), 409,
                      #"{"error":"a user with id \"alice\" exists already","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin"}"#), 400, #"{"error":"missing required field","field":"email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"email":"erin@example.com"}"#), 400, #"{"error":"missing required field","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"bad id!","email":"erin@example.com"}"#), 400,
                      #"{"error":"expected 1 to 64 letters, digits, '.', '-' or '_'","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin.example.com"}"#), 400,
                      #"{"error":"expected an email address","field":"email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":3}"#), 400,
                      #"{"error":"expected 0, 1 or 2","field":"real_user_status"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","hide_email":"yes"}"#), 400,
                      #"{"error":"expected true or false","field":"hide_email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","phone":"1"}"#), 400,
                      #"{"error":"unknown field (expected one of: id, email, given_name, family_name, hide_email, real_user_status, relay_domain, managed, omit_is_private_email)","field":"phone"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","relay_domain":"apple.com"}"#), 400,
                      #"{"error":"expected \"private.icloud.com\" or \"privaterelay.appleid.com\" or \"icloud.com\"","field":"relay_domain"}"#)
        let fetched = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(fetched.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol", id])
        // Twin: the same user with every field right is accepted.
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":0}"#), 201)
    }

    func testUsersRoute_RefusesIdsShapedLikeASub_AndEmailsWithControlCharacters() async throws {
        let mock = try frozenClient()
        // alice's sub as an id would shadow her in every lookup by user (probe N13).
        let aliceSub = teamSub("alice")
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(aliceSub)","email":"impostor@example.com"}"#), 400,
                      #"{"error":"expected an id that is not shaped like a sub (NNNNNN.<32 hex>.NNNN)","field":"id"}"#)
        for email in [#"a\u0000b@example.com"#, #"a\tb@c"#, #"a\r\nb@example.com"#, #"a@example.com\r\n"#, #"a\u007fb@example.com"#] {
            assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"\#(email)"}"#), 400,
                          #"{"error":"expected an email address","field":"email"}"#)
        }
        // The twins: an id with the same parts but another shape, and a plain email.
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(aliceSub).x","email":"erin@example.com"}"#), 201)
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin+tag@example.com"}"#), 201)
    }

    func testUsersRoute_RuntimeUserGetsUserJSONOnFirstAuthorizationOnly() async throws {
        let mock = try frozenClient()
        let id = freshUserID()
        // Before it is added, signing in as it is refused, naming the user.
        let unknown = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(unknown, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson"}"#), 201)
        let first = try await mock.headlessAuthorize(user: id)
        XCTAssertEqual(first["user"], #"{"name":{"firstName":"Carol","lastName":"Carlson"},"email":"\#(id)@example.com"}"#)
        let tokens = try assertTokenAnswer(try await mock.redeem(try XCTUnwrap(first["code"])), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let claims = try await mock.verifiedClaims(tokens["id_token"]?.stringValue)
        XCTAssertEqual(claims["sub"], .string(teamSub(id)))
        XCTAssertEqual(claims["email"], .string("\(id)@example.com"))
        let second = try await mock.headlessAuthorize(user: id)
        XCTAssertNil(second["user"])
        XCTAssertNotNil(second["code"])
    }

    func testUsersRoute_RuntimeUserHidingEmail_GetsTheRelayAddressTheRouteAnswered() async throws {
        let mock = try frozenClient()
        let id = freshUserID()
        let added = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","hide_email":true}"#)
        let relay = try XCTUnwrap(try jsonObject(added.body)["teams"]?.arrayValue?.first?.objectValue?["relay_email"]?.stringValue)
        let native = try jsonObject(try await mock.nativeSignIn(user: id).body)
        XCTAssertEqual(native["email"], .string(relay))
        XCTAssertEqual(native["user"], .string(teamSub(id)))
        // Twin: a runtime user who shares the address gets the real one.
        let sharing = try await addUser(mock)
        let signedIn = try jsonObject(try await mock.nativeSignIn(user: sharing).body)["email"]
        XCTAssertEqual(signedIn, .string("\(sharing)@example.com"))
    }
}
