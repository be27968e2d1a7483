import AppleIDMock
import FoundationEssentials
import JOSE

/// One request `appleid-mock conformance` sends to Apple and to the mock alike, and how their
/// answers are compared. Every probe is one an anonymous client could send: no credential, token,
/// cookie or user identifier; the only secret-shaped field is a `client_secret` signed by a P-256
/// key made for the run and thrown away, which no one has registered (apple-behaviour.md §13).
struct ConformanceProbe: Sendable {
    /// How an answer is taken apart into the parts compared.
    enum Kind: Sendable {
        /// The discovery document: every member, endpoint URLs relative to the side's own address.
        case discovery
        /// A JWKS: members, key count, each key's members and fixed values; kids and moduli by shape.
        case keys
        /// An OAuth error answer: the body byte for byte.
        case oauthError
        /// An authorize configuration error: its format, error code and message.
        case authorizeError
    }

    /// Where the `client_secret` of a probe goes: the placeholder in the request's body is
    /// replaced by a fresh throwaway secret at send time.
    static let throwawaySecret = "{throwaway-client-secret}"
    /// The kid of the throwaway secret: shaped like Apple's Key IDs, registered nowhere.
    static let throwawayKeyID = "PROBEKEY00"
    /// The team (`iss`) of the throwaway secret: shaped like a Team ID, registered nowhere.
    static let throwawayTeamID = "PROBETEAM0"
    /// The client id the probes name: the built-in scenario's Services ID, on a reserved domain
    /// (RFC 2606), so Apple knows no such client.
    static let clientID = "com.example.web"

    /// A short stable name: the recording's file name and the report's label.
    let id: String
    /// The Apple behaviour it guards, with its section in apple-behaviour.md.
    let guards: String
    /// `GET` or `POST`.
    let method: String
    /// Path and query.
    let path: String
    /// The body's content type, for a POST.
    let contentType: String?
    /// The body as sent (with `throwawaySecret` standing for the secret).
    let body: String
    /// How the answers are compared.
    let kind: Kind

    /// The headers compared on every probe, by name.
    static let comparedHeaders = ["Content-Type", "Cache-Control", "Pragma", "Server", "Location"]

    /// What a probe compares, in words, for `--list` and the docs.
    var compares: String {
        let headers = "status, " + Self.comparedHeaders.joined(separator: ", ")
        switch kind {
        case .discovery: return headers + "; the body's members in order and each value (endpoint URLs relative to the address probed)"
        case .keys: return headers + "; the body's members, the number of keys, each key's members in order and its kty, use, alg and e; kid and n by shape only (length and alphabet, modulus bits)"
        case .oauthError: return headers + "; the body byte for byte"
        case .authorizeError: return headers + "; the body's format (HTML page or JSON), its error code and its message"
        }
    }

    /// The fixed probe set, in the order it runs.
    static let all: [ConformanceProbe] = [
        ConformanceProbe(id: "discovery", guards: "§1.6 the discovery document; §12 the June 2025 issuer flip",
                         method: "GET", path: "/.well-known/openid-configuration", contentType: nil, body: "", kind: .discovery),
        ConformanceProbe(id: "keys", guards: "§1.5 the key set's shape, headers and size",
                         method: "GET", path: "/auth/keys", contentType: nil, body: "", kind: .keys),
        ConformanceProbe(id: "token-no-client", guards: "§2.1 a token request without a client is invalid_client, 400",
                         method: "POST", path: "/auth/token", contentType: form, body: "", kind: .oauthError),
        ConformanceProbe(id: "token-json-body", guards: "§1.3 a JSON body at /auth/token (knob token_json_body_error)",
                         method: "POST", path: "/auth/token", contentType: "application/json",
                         body: #"{"client_id":"com.example.web","grant_type":"authorization_code"}"#, kind: .oauthError),
        ConformanceProbe(id: "token-unknown-grant", guards: "§1.3, §2.1 a grant Apple does not support",
                         method: "POST", path: "/auth/token", contentType: form,
                         body: "client_id=com.example.web&grant_type=password", kind: .oauthError),
        ConformanceProbe(id: "token-unknown-key", guards: "§3 a client_secret signed by a key Apple does not know is invalid_client",
                         method: "POST", path: "/auth/token", contentType: form,
                         body: "client_id=com.example.web&client_secret=\(throwawaySecret)&grant_type=client_credentials&scope=user.migration",
                         kind: .oauthError),
        ConformanceProbe(id: "revoke-no-client", guards: "§1.4 a revoke request without a client is invalid_client, 400",
                         method: "POST", path: "/auth/revoke", contentType: form, body: "", kind: .oauthError),
        ConformanceProbe(id: "revoke-json-body", guards: "§1.3, §1.4 a JSON body at /auth/revoke (knob token_json_body_error)",
                         method: "POST", path: "/auth/revoke", contentType: "application/json",
                         body: #"{"client_id":"com.example.web"}"#, kind: .oauthError),
        ConformanceProbe(id: "migration-no-client", guards: "§8 a migration request without a client is invalid_client, 400",
                         method: "POST", path: "/auth/usermigrationinfo", contentType: form, body: "", kind: .oauthError),
        ConformanceProbe(id: "migration-json-body", guards: "§1.3, §8 a JSON body at /auth/usermigrationinfo (knob token_json_body_error)",
                         method: "POST", path: "/auth/usermigrationinfo", contentType: "application/json",
                         body: #"{"client_id":"com.example.web"}"#, kind: .oauthError),
        ConformanceProbe(id: "authorize-unknown-client", guards: "§2.2 authorize's answer to an unknown client_id (knobs authorize_error_format, authorize_error_status)",
                         method: "GET",
                         path: "/auth/authorize?client_id=com.example.unknown&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback&response_type=code",
                         contentType: nil, body: "", kind: .authorizeError),
        ConformanceProbe(id: "authorize-bad-redirect", guards: "§2.2 authorize's answer to a redirect_uri the client did not register (knobs authorize_error_format, authorize_error_status)",
                         method: "GET",
                         path: "/auth/authorize?client_id=com.example.web&redirect_uri=https%3A%2F%2Fexample.invalid%2Fcallback&response_type=code",
                         contentType: nil, body: "", kind: .authorizeError),
    ]

    private static let form = "application/x-www-form-urlencoded"

    /// The User-Agent every probe sends, so Apple's logs can tell what it is.
    static var userAgent: String { "appleid-mock-conformance/\(AppleIDMockVersion.current)" }

    /// The headers sent (besides `Host`, `Content-Length` and `Connection: close`, which the
    /// client adds), in order.
    var headers: [(String, String)] {
        var headers = [("User-Agent", Self.userAgent)]
        if let contentType { headers.append(("Content-Type", contentType)) }
        return headers
    }

    /// The body to send, with a fresh throwaway secret in place of the placeholder.
    func bodyToSend(secret: () throws -> String) rethrows -> [UInt8] {
        guard body.contains(Self.throwawaySecret) else { return Array(body.utf8) }
        return Array(body.replacing(Self.throwawaySecret, with: try secret()).utf8)
    }

    /// A client_secret as Apple wants one (§3), signed by a P-256 key generated now and discarded
    /// when this returns: Apple, and the mock, know no such key.
    static func makeThrowawaySecret(now: Int64) throws -> String {
        let key = try P256PrivateKey.generate()
        return try ClientSecret.make(teamID: throwawayTeamID, keyID: throwawayKeyID, clientID: clientID, privateKey: key,
                                     issuedAt: now, lifetime: 300)
    }

    /// The description `--list` prints for the throwaway secret.
    static let throwawayDescription = "{a JWT made at run time: header {\"alg\":\"ES256\",\"kid\":\"\(throwawayKeyID)\"}, claims iss \(throwawayTeamID), "
        + "sub \(clientID), aud https://appleid.apple.com, iat now, exp now+300; signed by a P-256 key generated for the run and discarded}"
}
