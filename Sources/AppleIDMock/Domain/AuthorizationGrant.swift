/// What an authorization code stands for: who approved which client, under which consent, and
/// what the code is bound to (client, redirect URI, PKCE challenge).
package struct AuthorizationGrant: Sendable, Equatable {
    /// How the user signed in.
    enum Flow: Sendable, Equatable {
        /// `/auth/authorize` in a browser.
        case web
        /// An app's `ASAuthorizationAppleIDCredential` (no redirect URI).
        case native
    }

    /// The client the code was issued to.
    package var clientID: String
    /// The redirect URI of the authorize request; nil for native codes.
    package var redirectURI: String?
    /// The consent the code was issued under.
    var consentID: UInt32
    /// Team of the client.
    package var teamID: String
    /// Scenario user id.
    var userID: String
    /// The `nonce` of the request, echoed into id_tokens.
    package var nonce: String?
    /// PKCE `code_challenge` and its method (`S256` or `plain`).
    var codeChallenge: String?
    /// PKCE method.
    var codeChallengeMethod: String?
    /// When the user authenticated (`auth_time`).
    var authTime: Int64
    /// When the code stops working.
    var expiresAt: Int64
    /// Web or native.
    var flow: Flow
    /// Whether this was the user's first authorization of the app group.
    var isFirstAuthorization: Bool
    /// What the id_token the code is exchanged for gets wrong (a headless authorize's `defect`).
    var defect: TokenDefect? = nil
}
