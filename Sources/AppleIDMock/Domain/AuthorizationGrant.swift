/// What an authorization code stands for: who approved which client, under which consent, and
/// what the code is bound to (client, redirect URI, PKCE challenge).
package struct AuthorizationGrant: Sendable, Equatable {
    /// How the user signed in.
    package enum Flow: Sendable, Equatable {
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
    package var consentID: UInt32
    /// Team of the client.
    package var teamID: String
    /// Scenario user id.
    package var userID: String
    /// The `nonce` of the request, echoed into id_tokens.
    package var nonce: String?
    /// PKCE `code_challenge` and its method (`S256` or `plain`).
    package var codeChallenge: String?
    /// PKCE method.
    package var codeChallengeMethod: String?
    /// When the user authenticated (`auth_time`).
    package var authTime: Int64
    /// When the code stops working.
    package var expiresAt: Int64
    /// Web or native.
    package var flow: Flow
    /// Whether this was the user's first authorization of the app group.
    package var isFirstAuthorization: Bool
    /// What the id_token the code is exchanged for gets wrong (a headless authorize's `defect`).
    package var defect: TokenDefect? = nil
}
