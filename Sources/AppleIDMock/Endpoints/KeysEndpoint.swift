import MiniHTTP

/// `GET /auth/keys`: the JWKS (apple-behaviour.md §1.5).
struct KeysEndpoint: Sendable {
    let domain: AppleIDDomain

    /// The published keys, shuffled per fetch unless the scenario turns that off, with the
    /// scenario's `Cache-Control` (Apple's say not to cache, §1.5 [O]).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let compatibility = domain.scenario.compatibility
        var response = AppleResponse.json(Self.body(domain.publishedKeys.fragments(shuffled: compatibility.shuffleKeys)))
        if let cacheControl = compatibility.jwksCacheControl { response.headers.add("Cache-Control", cacheControl) }
        return response
    }

    /// `{"keys":[…]}` around the JWK fragments, as written (each one's fields in Apple's order).
    static func body(_ fragments: [[UInt8]]) -> [UInt8] {
        var body: [UInt8] = Array(#"{"keys":["#.utf8)
        body.reserveCapacity(16 + fragments.reduce(0) { $0 + $1.count + 1 })
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: fragment)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }
}
