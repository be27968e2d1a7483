/// What `World.grant` decided: the consent, the code, and the claims of the id_token to sign.
struct GrantResult: Sendable {
    let user: Scenario.User
    let entry: ClientDirectory.Entry
    let consentScopes: Set<String>
    let hideEmail: Bool
    let isFirst: Bool
    let code: String?
    let claims: IdentityTokenClaims
    let signingKey: KeyRing.SigningKey?
}
