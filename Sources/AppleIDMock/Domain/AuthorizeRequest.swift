import JOSE

/// A validated `/auth/authorize` request (apple-behaviour.md §1.2).
package struct AuthorizeRequest: Sendable, Equatable {
    /// Longest `state`, `nonce` or edited name accepted, in UTF-8 bytes. Apple's own limits are
    /// unknown and real clients send long values (a 195-character `state` is seen from a
    /// published library), so the bound is generous; it keeps a pending code small.
    static let maxStringBytes = 1024

    /// The Services ID.
    package var clientID: String
    /// Exactly one of the Services ID's registered return URLs.
    package var redirectURI: String
    /// Whether an id_token is delivered with the code (`code id_token`).
    var wantsIDToken: Bool
    /// How the answer is delivered.
    package var responseMode: ResponseMode
    /// Requested scopes in order (`openid`, `name`, `email`).
    package var scopes: [String]
    /// Echoed back unchanged.
    package var state: String?
    /// Echoed into the id_token.
    package var nonce: String?
    /// PKCE challenge.
    var codeChallenge: String?
    /// PKCE method, `S256` or `plain`.
    var codeChallengeMethod: String?

    /// The parameters that reproduce this request (for the consent page's hidden fields).
    package var parameters: [(String, String)] {
        var out: [(String, String)] = [("client_id", clientID), ("redirect_uri", redirectURI),
                                       ("response_type", wantsIDToken ? "code id_token" : "code"), ("response_mode", responseMode.rawValue)]
        if !scopes.isEmpty { out.append(("scope", scopes.joined(separator: " "))) }
        if let state { out.append(("state", state)) }
        if let nonce { out.append(("nonce", nonce)) }
        if let codeChallenge { out.append(("code_challenge", codeChallenge)) }
        if let codeChallengeMethod { out.append(("code_challenge_method", codeChallengeMethod)) }
        return out
    }

    /// Equality over every field.
    package static func == (lhs: AuthorizeRequest, rhs: AuthorizeRequest) -> Bool {
        lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
    }
}

/// Where and how the authorization response reaches the client (§1.2 "Response delivery").
package struct Delivery: Sendable, Equatable {
    /// How it is delivered.
    package var responseMode: ResponseMode
    /// The registered return URL.
    package var redirectURI: String
    /// Response parameters in order (`user` among them, as a JSON string, for `form_post`).
    package var parameters: [(String, String)]
    /// The `user` object on a first authorization with scopes, for `web_message`, whose message
    /// carries it as an object (§5).
    package var user: JSONObject?

    /// `GET` for a redirect, `POST` for form_post (web_message is not an HTTP request at all).
    package var method: String { responseMode == .formPost ? "POST" : "GET" }

    /// A delivery of `parameters` (and `user`, for web_message) to `redirectURI`.
    init(responseMode: ResponseMode, redirectURI: String, parameters: [(String, String)], user: JSONObject? = nil) {
        self.responseMode = responseMode
        self.redirectURI = redirectURI
        self.parameters = parameters
        self.user = user
    }

    /// Equality over every field.
    package static func == (lhs: Delivery, rhs: Delivery) -> Bool {
        lhs.responseMode == rhs.responseMode && lhs.redirectURI == rhs.redirectURI && lhs.user == rhs.user
            && lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
    }
}
