/// What an authorization code stands for: who approved which client, under which consent, and
/// what the code is bound to (client, redirect URI, PKCE challenge).
public struct AuthorizationGrant: Sendable, Equatable {
    /// How the user signed in.
    public enum Flow: Sendable, Equatable {
        /// `/auth/authorize` in a browser.
        case web
        /// An app's `ASAuthorizationAppleIDCredential` (no redirect URI).
        case native
    }

    /// The client the code was issued to.
    public var clientID: String
    /// The redirect URI of the authorize request; nil for native codes.
    public var redirectURI: String?
    /// The consent the code was issued under.
    public var consentID: UInt32
    /// Team of the client.
    public var teamID: String
    /// Scenario user id.
    public var userID: String
    /// The `nonce` of the request, echoed into id_tokens.
    public var nonce: String?
    /// PKCE `code_challenge` and its method (`S256` or `plain`).
    public var codeChallenge: String?
    /// PKCE method.
    public var codeChallengeMethod: String?
    /// When the user authenticated (`auth_time`).
    public var authTime: Int64
    /// When the code stops working.
    public var expiresAt: Int64
    /// Web or native.
    public var flow: Flow
    /// Whether this was the user's first authorization of the app group.
    public var isFirstAuthorization: Bool
    /// What the id_token the code is exchanged for gets wrong (a headless authorize's `defect`).
    public var defect: TokenDefect? = nil
}
