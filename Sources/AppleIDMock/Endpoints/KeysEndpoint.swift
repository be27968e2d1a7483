import MiniHTTP

/// `GET /auth/keys`: the JWKS (apple-reference.md §1.5).
struct KeysEndpoint: Sendable {
    let domain: AppleIDDomain

    /// The published keys, shuffled per fetch unless the scenario turns that off, with the
    /// scenario's `Cache-Control` (Apple's say not to cache, §1.5 [O]).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let compatibility = domain.scenario.compatibility
        var response = AppleResponse.json(domain.state.jwksBody(shuffled: compatibility.shuffleKeys))
        if let cacheControl = compatibility.jwksCacheControl { response.headers.add("Cache-Control", cacheControl) }
        return response
    }
}
