/// One sign-in: who, into which client, with what. Web approval, native sign-in and
/// `/__mock/id-token` all go through `World.grant` (apple-behaviour.md §1.2, §4, §5).
struct GrantRequest: Sendable {
    /// How the user signed in.
    var flow: AuthorizationGrant.Flow
    /// User id.
    var userID: String
    /// The client.
    package var clientID: String
    /// Requested scopes among `name` and `email`.
    package var scopes: Set<String>
    /// Hide My Email; nil takes the user's own setting.
    package var hideEmail: Bool?
    /// Echoed into the id_token.
    package var nonce: String?
    /// Web: the registered return URL the code is bound to.
    package var redirectURI: String?
    /// PKCE challenge and method.
    var codeChallenge: String?
    var codeChallengeMethod: String?
    /// Whether a code is issued (false for `/__mock/id-token`, which changes nothing).
    var issuesCode: Bool = true
    /// What the id_tokens of this sign-in get wrong (`POST /__mock/authorize`'s `defect`); nil: nothing.
    var defect: TokenDefect? = nil
}
