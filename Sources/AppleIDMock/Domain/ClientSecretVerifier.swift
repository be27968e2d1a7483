import JOSE
import Synchronization

/// Checks a `client_secret` JWT exactly as Apple does (apple-reference.md §3): ES256 with a raw
/// 64-byte signature, `kid` a registered key of the client's team, `iss` the Team ID, `sub` the
/// client id, `aud` `https://appleid.apple.com`, `exp` in the future but at most 15777000 s
/// ahead, `iat` not in the future. Every failure is `invalid_client` with no description.
public struct ClientSecretVerifier: Sendable {
    /// Apple's audience for client secrets.
    public static let audience = "https://appleid.apple.com"

    private let keys: [String: [String: P256PublicKey]]
    private let leeway: Int64
    private let verified = VerifiedSecrets()

    /// A verifier for the scenario's teams and their developer keys.
    public init(scenario: Scenario) {
        var keys: [String: [String: P256PublicKey]] = [:]
        for team in scenario.teams {
            for key in team.developerKeys {
                keys[team.teamID, default: [:]][key.keyID] = try? P256PublicKey(pem: key.publicKeyPEM)
            }
        }
        self.keys = keys
        leeway = Int64(scenario.compatibility.clientSecretIATLeeway)
    }

    /// Verifies `secret` for `clientID` of `teamID` at `now`; throws `invalid_client`.
    public func verify(_ secret: String, clientID: String, teamID: String, now: Int64) throws(OAuthError) {
        try check(signedClaims(secret, teamID: teamID), clientID: clientID, teamID: teamID, now: now)
    }

    /// The claims of `secret` once its signature is checked (no clock involved), so the time
    /// checks can run inside the operation that uses the clock; throws `invalid_client`.
    public func signedClaims(_ secret: String, teamID: String) throws(OAuthError) -> JSONObject {
        guard let claims = verified.claims(of: secret, teamID: teamID) ?? verifySignature(secret, teamID: teamID) else {
            throw .invalidClient
        }
        return claims
    }

    /// Checks signed claims for `clientID` of `teamID` at `now`; throws `invalid_client`.
    public func check(_ claims: JSONObject, clientID: String, teamID: String, now: Int64) throws(OAuthError) {
        guard claims["iss"] == .string(teamID),
              claims["sub"] == .string(clientID),
              claims["aud"] == .string(Self.audience),
              case .int(let expiresAt)? = claims["exp"],
              case .int(let issuedAt)? = claims["iat"],
              expiresAt > now,
              expiresAt - now <= Int64(ClientSecret.maxLifetime),
              issuedAt <= now + leeway
        else { throw .invalidClient }
    }

    /// The claims of `secret` when it is an ES256 JWS signed by a developer key of `teamID`.
    /// A backend sends the same secret for months, so a good signature is remembered: the
    /// claims are still checked against the clock on every request.
    private func verifySignature(_ secret: String, teamID: String) -> JSONObject? {
        guard let token = try? CompactJWS.parse(secret),
              token.header["alg"] == .string("ES256"),
              case .string(let keyID)? = token.header["kid"],
              let key = keys[teamID]?[keyID],
              token.verifyES256(with: key),
              let claims = token.payloadJSON
        else { return nil }
        verified.remember(secret, teamID: teamID, claims: claims)
        return claims
    }
}

/// Secrets whose signature checked out, per team; bounded, dropped wholesale when full.
private final class VerifiedSecrets: Sendable {
    private static let capacity = 256
    private let entries = Mutex<[String: (teamID: String, claims: JSONObject)]>([:])

    func claims(of secret: String, teamID: String) -> JSONObject? {
        entries.withLock { entries in
            guard let entry = entries[secret], entry.teamID == teamID else { return nil }
            return entry.claims
        }
    }

    func remember(_ secret: String, teamID: String, claims: JSONObject) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[secret] = (teamID, claims)
        }
    }
}
