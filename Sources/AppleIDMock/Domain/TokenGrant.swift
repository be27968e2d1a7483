/// What a code exchange or refresh produced.
struct TokenGrant: Sendable {
    let accessToken: String
    let refreshToken: String?
    let claims: IdentityTokenClaims?
    let signingKey: KeyRing.SigningKey?
    /// What the id_token gets wrong: the code's `defect`, for an exchange.
    var defect: TokenDefect? = nil
}
