import MiniHTTP

/// `GET /auth/keys`: the JWKS (apple-reference.md §1.5).
struct KeysEndpoint: Sendable {
    let domain: AppleIDDomain

    /// The key set, shuffled per fetch unless the scenario turns that off.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        AppleResponse.json(domain.keyRing.jwksBody(shuffled: domain.scenario.compatibility.shuffleKeys))
    }
}
