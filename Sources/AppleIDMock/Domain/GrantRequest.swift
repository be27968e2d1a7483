/// One sign-in: who, into which client, with what. Web approval, native sign-in and
/// `/__mock/id-token` all go through `World.grant` (apple-reference.md §1.2, §4, §5).
public struct GrantRequest: Sendable {
    /// How the user signed in.
    public var flow: AuthorizationGrant.Flow
    /// User id.
    public var userID: String
    /// The client.
    public var clientID: String
    /// Requested scopes among `name` and `email`.
    public var scopes: Set<String>
    /// Hide My Email; nil takes the user's own setting.
    public var hideEmail: Bool?
    /// Echoed into the id_token.
    public var nonce: String?
    /// Web: the registered return URL the code is bound to.
    public var redirectURI: String?
    /// PKCE challenge and method.
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    /// Whether a code is issued (false for `/__mock/id-token`, which changes nothing).
    public var issuesCode: Bool = true
    /// What the id_tokens of this sign-in get wrong (`POST /__mock/authorize`'s `defect`); nil: nothing.
    public var defect: TokenDefect? = nil
}
