/// What a code exchange or refresh produced.
struct TokenGrant: Sendable {
    let accessToken: String
    let refreshToken: String?
    let claims: IdentityTokenClaims?
    let signingKey: KeyRing.SigningKey?
}
