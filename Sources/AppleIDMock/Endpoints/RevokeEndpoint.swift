import MiniHTTP

/// `POST /auth/revoke` (apple-reference.md §1.4): 200 with an empty body, even for unknown tokens.
struct RevokeEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        try domain.revoke(try AppleForm.fields(request, domain.scenario.compatibility))
        return HTTPResponse(status: .ok)
    }
}
