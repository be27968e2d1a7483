import MiniHTTP

/// `POST /auth/revoke` (apple-behaviour.md §1.4): 200 with an empty body, even for unknown tokens.
struct RevokeEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = try AppleForm.fields(request, domain.scenario.compatibility)
        try domain.revoke(RevokeRequest(clientID: form["client_id"], clientSecret: form["client_secret"], token: form["token"]))
        return HTTPResponse(status: .ok)
    }
}
