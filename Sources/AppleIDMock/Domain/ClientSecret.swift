import JOSE

/// The ES256 `client_secret` JWT a backend sends to `/auth/token` (apple-behaviour.md §3).
package enum ClientSecret {
    /// Apple's hard limit on `exp` ahead of now: about six months.
    package static let maxLifetime = 15_777_000

    /// Mints a client secret: header `{"alg":"ES256","kid":keyID}`, claims
    /// `iss` team, `iat`, `exp`, `aud` `https://appleid.apple.com`, `sub` client id.
    package static func make(teamID: String, keyID: String, clientID: String, privateKey: P256PrivateKey,
                            issuedAt: Int64, lifetime: Int = 3600, audience: String = "https://appleid.apple.com") throws(JOSEError) -> String {
        var header = JSONObject()
        header["alg"] = "ES256"
        header["kid"] = .string(keyID)
        var claims = JSONObject()
        claims["iss"] = .string(teamID)
        claims["iat"] = .int(issuedAt)
        claims["exp"] = .int(issuedAt + Int64(lifetime))
        claims["aud"] = .string(audience)
        claims["sub"] = .string(clientID)
        return try CompactJWS.signES256(header: header, payload: JSONWriter.compact(.object(claims)), key: privateKey).compact
    }
}
