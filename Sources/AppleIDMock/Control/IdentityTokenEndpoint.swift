import JOSE
import MiniHTTP

/// `POST /__mock/id-token`: mints a valid id_token for a scenario user without any sign-in
/// flow, for backend tests that only need a token to present. No state changes.
///
/// Body: `{"user": "alice", "client_id": "com.example.app", "nonce": "…", "hide_email": false}`;
/// answer: `{"email": …, "id_token": …, "sub": …}`.
struct IdentityTokenEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, known: ["user", "client_id", "nonce", "hide_email"])
        let userID = try body.string("user")
        guard let user = domain.scenario.user(userID) else {
            throw ControlRequest.Failure(message: "no user \"\(userID)\" in the scenario", field: "user")
        }
        guard let clientID = try body.optionalString("client_id") ?? domain.scenario.teams.first?.clients.first?.clientID else {
            throw ControlRequest.Failure(message: "missing required field (the scenario has no client to default to)", field: "client_id")
        }
        guard let (team, _) = domain.scenario.client(clientID) else {
            throw ControlRequest.Failure(message: "no client \"\(clientID)\" in the scenario", field: "client_id")
        }
        let hide = try body.optionalBool("hide_email") ?? user.hideEmail
        let now = domain.clock.seconds
        var claims = IdentityTokenClaims(issuer: domain.issuer, audience: clientID,
                                         subject: Identity.subject(teamID: team.teamID, userID: user.id),
                                         issuedAt: now, expiresAt: now + Int64(domain.scenario.lifetimes.idToken))
        claims.nonce = try body.optionalString("nonce", maxBytes: AuthorizeRequest.maxStringBytes)
        claims.email = hide ? Identity.relayAddress(teamID: team.teamID, userID: user.id) : user.email
        claims.authTime = now
        let token = try domain.keyRing.sign(claims: claims.json(domain.scenario.compatibility))
        var answer = JSONObject()
        answer["id_token"] = .string(token)
        answer["sub"] = .string(claims.subject)
        answer["email"] = claims.email.map(JSONValue.string) ?? .null
        return ControlResponse.json(.object(answer))
    }
}
