import JOSE
import MiniHTTP

/// `POST /__mock/id-token`: mints a valid id_token for a user without any sign-in flow, for
/// backend tests that only need a token to present. No state changes: the claims are those a
/// sign-in would give now (consent's email choice, `transfer_sub` during a transfer).
///
/// Body: `{"user": "alice", "client_id": "com.example.app", "nonce": "…", "hide_email": false}`;
/// answer: `{"email": …, "id_token": …, "sub": …}`.
struct IdentityTokenEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.mintIdentityToken)
        let userID = try body.string("user")
        guard let clientID = try body.optionalString("client_id") ?? domain.clients.first(of: domain.scenario)?.client.clientID else {
            throw ControlRequest.Failure(message: "missing required field (the scenario has no client to default to)", field: "client_id")
        }
        let minted: (token: String, claims: IdentityTokenClaims) = try domain.identityToken(userID: userID, clientID: clientID, nonce: try body.optionalString("nonce", maxBytes: AuthorizeRequest.maxStringBytes),
                                          hideEmail: try body.optionalBool("hide_email"))
        var answer = JSONObject()
        answer["id_token"] = .string(minted.token)
        answer["sub"] = .string(minted.claims.subject)
        answer["email"] = minted.claims.email.map(JSONValue.string) ?? .null
        return ControlResponse.json(.object(answer))
    }
}
