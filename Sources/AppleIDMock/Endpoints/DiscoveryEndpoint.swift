import JOSE
import MiniHTTP

/// `GET /.well-known/openid-configuration`: Apple's document key for key
/// (apple-behaviour.md §1.6), endpoints under the base URL, `issuer` as configured.
struct DiscoveryEndpoint: Sendable {
    let domain: AppleIDDomain
    let site: SiteAddress

    /// The discovery document.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        AppleResponse.json(JSONWriter.compact(Self.document(issuer: domain.issuer, baseURL: site.url)))
    }

    /// Where the `discovery-issuer-flip` incident redirects: the mock's stand-in for
    /// `https://account.apple.com/.well-known/openid-configuration` (docs/apple-behaviour.md §12).
    static let flippedPath = "/account.apple.com/.well-known/openid-configuration"

    /// The document account.apple.com served in June 2025: `issuer` that host, the endpoints
    /// the mock's own (Apple's were on account.apple.com, which a test may not reach).
    func flipped(_ request: HTTPRequest) -> HTTPResponse {
        AppleResponse.json(JSONWriter.compact(Self.document(issuer: FaultIncident.flippedIssuer, baseURL: site.url)))
    }

    /// The document for an issuer and base URL, in Apple's key order.
    static func document(issuer: String, baseURL: String) -> JSONValue {
        var document = JSONObject()
        document["issuer"] = .string(issuer)
        document["authorization_endpoint"] = .string(baseURL + "/auth/authorize")
        document["token_endpoint"] = .string(baseURL + "/auth/token")
        document["revocation_endpoint"] = .string(baseURL + "/auth/revoke")
        document["jwks_uri"] = .string(baseURL + "/auth/keys")
        document["response_types_supported"] = ["code"]
        document["response_modes_supported"] = ["query", "fragment", "form_post"]
        document["subject_types_supported"] = ["pairwise"]
        document["id_token_signing_alg_values_supported"] = ["RS256"]
        document["scopes_supported"] = ["openid", "email", "name"]
        document["token_endpoint_auth_methods_supported"] = ["client_secret_post"]
        document["claims_supported"] = [
            "aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss",
            "nonce", "nonce_supported", "real_user_status", "sub", "transfer_sub",
        ]
        return .object(document)
    }
}
