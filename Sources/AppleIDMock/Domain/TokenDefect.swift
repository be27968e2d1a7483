/// One way a token can be wrong that a careless verifier accepts (`POST /__mock/tokens`,
/// `appleid-mock token --defect`, `appleid-mock audit`). Each is the genuine token with one
/// thing changed; `check` names what a backend must verify to refuse it.
package enum TokenDefect: String, CaseIterable, Sendable, Equatable {
    /// `exp` an hour in the past (and `iat` one token lifetime before it).
    case expired
    /// `iat` an hour in the future (and `exp` one token lifetime after it).
    case notYetValid = "not-yet-valid"
    /// `iss` is not the mock's issuer.
    case wrongIssuer = "wrong-issuer"
    /// `aud` is another app's client id.
    case wrongAudience = "wrong-audience"
    /// The RS256 signature with one bit flipped.
    case badSignature = "bad-signature"
    /// A `kid` that `/auth/keys` does not publish; signed by the active key.
    case unknownKid = "unknown-kid"
    /// Header `alg: none` and an empty signature.
    case algNone = "alg-none"
    /// Header `alg: HS256`, an HMAC keyed with the PEM of the active key's verifying half (key confusion).
    case hs256PublicKey = "hs256-public-key"
    /// No `sub` (for a notification: no `sub` in its event).
    case missingSub = "missing-sub"
    /// A `nonce` other than the one the backend sent (identity tokens only).
    case nonceMismatch = "nonce-mismatch"
    /// Signed by a key no longer published: the most recently retired one, else a key the mock never published.
    case retiredKey = "retired-key"
    /// `iat` 30 days ago, `exp` still in the future.
    case iatFarPast = "iat-far-past"

    /// The check that refuses the defect, for the README, `--help` and the audit's report.
    package var check: String {
        switch self {
        case .expired: "exp is in the future"
        case .notYetValid: "iat is not in the future"
        case .wrongIssuer: "iss is exactly the issuer"
        case .wrongAudience: "aud is your own client id"
        case .badSignature: "the RS256 signature verifies"
        case .unknownKid: "the key is chosen by kid from /auth/keys; an unknown kid is refused"
        case .algNone: "alg is RS256, never none"
        case .hs256PublicKey: "alg is RS256, never HS256"
        case .missingSub: "sub is present"
        case .nonceMismatch: "nonce equals the one sent"
        case .retiredKey: "the key is one /auth/keys publishes now"
        case .iatFarPast: "iat is recent (at most about 10 minutes old)"
        }
    }

    /// The names, for messages.
    package static let names = allCases.map(\.rawValue)
}
