import JOSE
import MiniHTTP

/// `/__mock/users`: users at runtime. A CI suite can give every test a fresh user, so "first
/// login" never leaks between tests.
///
/// - `POST /__mock/users` `{"id", "email", "given_name"?, "family_name"?, "hide_email"?, "real_user_status"?,
///   "relay_domain"?, "managed"?}` (a managed account takes no email) → 201, the user with its `sub` and relay address per team; a duplicate id → 409
/// - `GET /__mock/users[?offset=N&limit=N]` → `{"users": [...], "total", "next_offset"}`, each with
///   `deleted`: a page of at most `limit` (default and most 1,000) users from `offset`, in order;
///   `next_offset` is where the next page starts, null after the last. Memory stays that of one
///   page, however many users there are.
struct UsersEndpoint: Sendable {
    let domain: AppleIDDomain

    /// Most users one page lists.
    static let pageLimit = 1000

    /// Adds a user.
    func add(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.addUser)
        // A Work & School (managed) account without an email: no email, nothing to hide.
        let managed = try body.optionalBool("managed") ?? false
        if managed {
            for field in ["email", "hide_email"] where body.object[field] != nil && body.object[field] != .null && body.object[field] != .bool(false) {
                throw ControlRequest.Failure(message: "expected none on a managed account (managed: a Work & School Apple Account without an email)", field: field)
            }
        }
        let status = try body.optionalInt("real_user_status") ?? 2
        guard (0...2).contains(status) else { throw ControlRequest.Failure(message: "expected 0, 1 or 2", field: "real_user_status") }
        var relayDomain = domain.scenario.compatibility.relayDomain
        if let name = try body.optionalString("relay_domain", maxBytes: 64) {
            guard let chosen = RelayDomain(rawValue: name) else {
                let expected = RelayDomain.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                throw ControlRequest.Failure(message: "expected \(expected)", field: "relay_domain")
            }
            relayDomain = chosen
        }
        var user = Scenario.User(id: try body.string("id"), email: managed ? "" : try body.string("email"),
                                 givenName: try body.optionalString("given_name", maxBytes: 256) ?? "",
                                 familyName: try body.optionalString("family_name", maxBytes: 256) ?? "",
                                 hideEmail: try body.optionalBool("hide_email") ?? false, realUserStatus: Int(status),
                                 relayDomain: relayDomain)
        user.managed = managed
        user.omitsPrivateEmail = try body.optionalBool("omit_is_private_email") ?? false
        let added = try domain.addUser(user)
        return ControlResponse.json(.object(json(UserAccount(user: added, addedAtRuntime: true))), status: HTTPStatus(201))
    }

    /// Lists a page of the users, in order.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.listUsers)
        var offset = 0
        var limit = Self.pageLimit
        for (name, value) in query {
            switch name {
            case "offset":
                guard let number = Int(value), number >= 0, number <= World.maxUserCount else {
                    throw ControlRequest.Failure(message: "expected an integer from 0 to \(World.maxUserCount)", field: "offset")
                }
                offset = number
            case "limit":
                guard let number = Int(value), (1...Self.pageLimit).contains(number) else {
                    throw ControlRequest.Failure(message: "expected an integer from 1 to \(Self.pageLimit)", field: "limit")
                }
                limit = number
            default: break
            }
        }
        let (page, total) = domain.users(offset: offset, limit: limit)
        let next = offset + page.count < total ? JSONValue.int(Int64(offset + page.count)) : .null
        return ControlResponse.json(.object(["users": .array(page.map { .object(json($0)) }), "total": .int(Int64(total)), "next_offset": next]))
    }

    /// A user with its identifiers in every team.
    private func json(_ account: UserAccount) -> JSONObject {
        let user = account.user
        var object = JSONObject()
        object["id"] = .string(user.id)
        object["email"] = user.managed ? .null : .string(user.email)
        if user.managed { object["managed"] = .bool(true) }
        if user.omitsPrivateEmail { object["omit_is_private_email"] = .bool(true) }
        object["given_name"] = .string(user.givenName)
        object["family_name"] = .string(user.familyName)
        object["hide_email"] = .bool(user.hideEmail)
        object["real_user_status"] = .int(Int64(user.realUserStatus))
        object["relay_domain"] = .string(user.relayDomain.rawValue)
        object["deleted"] = .bool(account.deleted)
        object["teams"] = .array(domain.scenario.teams.map { team in
            var entry = JSONObject()
            entry["team_id"] = .string(team.teamID)
            entry["sub"] = .string(Identity.subject(teamID: team.teamID, userID: user.id))
            entry["relay_email"] = .string(Identity.relayAddress(teamID: team.teamID, user: user))
            entry["relay_forwarding"] = .bool(!account.relayDisabledTeams.contains(team.teamID))
            return .object(entry)
        })
        return object
    }
}
