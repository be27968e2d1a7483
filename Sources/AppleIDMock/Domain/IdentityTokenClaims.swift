import JOSE

/// The claims of an id_token, written in the order Apple writes them (apple-behaviour.md §4):
/// `iss, aud, exp, iat, sub, [transfer_sub], [nonce], [c_hash|at_hash], [email, email_verified,
/// is_private_email], [auth_time], nonce_supported, [real_user_status]`.
struct IdentityTokenClaims: Sendable, Equatable {
    /// `iss`.
    var issuer: String
    /// `aud`: the client id the token was issued to (bundle id or Services ID), a single string.
    var audience: String
    /// `sub`.
    var subject: String
    /// `iat`.
    package var issuedAt: Int64
    /// `exp`.
    var expiresAt: Int64
    /// `transfer_sub`, during the 60 days after a team transfer (§8).
    package var transferSubject: String?
    /// `nonce`, echoed verbatim when the request carried one.
    package var nonce: String?
    /// `c_hash`: on native and authorize-issued tokens.
    var codeHash: String?
    /// `at_hash`: on tokens from a code exchange.
    var accessTokenHash: String?
    /// `email` (real or relay).
    package var email: String?
    /// `email_verified`; Apple's addresses are always verified.
    var emailVerified = true
    /// Whether `is_private_email` is left out though `email` is a relay address: Apple did so
    /// for some relay users in 2025 (§4 [O]); the user's `omit_is_private_email`.
    var omitsPrivateEmail = false
    /// Whether `email` is the user's relay address (they chose to hide theirs), not their own.
    var emailIsPrivate = false
    /// `auth_time`: absent after a refresh.
    var authTime: Int64?
    /// `nonce_supported`: always `true` today.
    var nonceSupported = true
    /// `real_user_status`: native first sign-in only.
    var realUserStatus: Int?

    /// Claims with the required parts; the rest default to absent.
    init(issuer: String, audience: String, subject: String, issuedAt: Int64, expiresAt: Int64) {
        self.issuer = issuer
        self.audience = audience
        self.subject = subject
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    /// The claims object; boolean claims encoded as the compatibility knobs say (§4, open question 1).
    package func json(_ compatibility: Compatibility) -> JSONObject {
        var claims = JSONObject()
        claims["iss"] = .string(issuer)
        claims["aud"] = .string(audience)
        claims["exp"] = .int(expiresAt)
        claims["iat"] = .int(issuedAt)
        claims["sub"] = .string(subject)
        if let transferSubject { claims["transfer_sub"] = .string(transferSubject) }
        if let nonce { claims["nonce"] = .string(nonce) }
        if let codeHash { claims["c_hash"] = .string(codeHash) }
        if let accessTokenHash { claims["at_hash"] = .string(accessTokenHash) }
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = Self.boolean(emailVerified, compatibility.emailVerified)
            // Present only for relay addresses (§4 [O]): the user hid their email.
            if emailIsPrivate && !omitsPrivateEmail { claims["is_private_email"] = Self.boolean(true, compatibility.isPrivateEmail) }
        }
        if let authTime { claims["auth_time"] = .int(authTime) }
        claims["nonce_supported"] = .bool(nonceSupported)
        if let realUserStatus { claims["real_user_status"] = .int(Int64(realUserStatus)) }
        return claims
    }

    /// OpenID Connect Core §3.1.3.6 / §3.3.2.11: base64url of the left half of SHA-256(value).
    static func halfHash(_ value: String) -> String {
        Base64URL.encode(SHA256.hash(Array(value.utf8)).prefix(16))
    }

    private static func boolean(_ value: Bool, _ encoding: Compatibility.BooleanEncoding) -> JSONValue {
        encoding == .boolean ? .bool(value) : .string(value ? "true" : "false")
    }
}
