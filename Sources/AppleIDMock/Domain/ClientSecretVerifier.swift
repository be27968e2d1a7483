import FoundationEssentials
import JOSE
import Synchronization

/// Checks a `client_secret` JWT exactly as Apple does (apple-behaviour.md §3): ES256 with a raw
/// 64-byte signature, `kid` a registered key of the client's team, `iss` the Team ID, `sub` the
/// client id, `aud` `https://appleid.apple.com` (a string, or by default a one-element array of
/// it, as Go's golang-jwt writes it), `exp` in the future but at most 15777000 s ahead, `iat` not
/// in the future. Every failure is `invalid_client` with no description; its
/// `reason` tells the developer which rule failed.
package struct ClientSecretVerifier: Sendable {
    /// Apple's audience for client secrets.
    static let audience = "https://appleid.apple.com"

    private let keys: [String: [String: DeveloperKeyEntry]]
    private let leeway: Int64
    private let clock: Compatibility.ClientSecretClock
    private let audienceArray: Compatibility.AudienceArray
    private let realTime: @Sendable () -> Double
    private let verified = VerifiedSecrets()

    /// A verifier for the scenario's teams and their developer keys; `realTime` is the system
    /// clock, read when the scenario checks secrets against real time and to word a refusal.
    init(scenario: Scenario, realTime: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        var keys: [String: [String: DeveloperKeyEntry]] = [:]
        for team in scenario.teams {
            for key in team.developerKeys {
                guard let publicKey = try? P256PublicKey(pem: key.publicKeyPEM) else { continue }
                keys[team.teamID, default: [:]][key.keyID] = DeveloperKeyEntry(key: publicKey, primaryAppID: key.primaryAppID,
                                                                               propagationSeconds: Int64(key.propagationSeconds))
            }
        }
        self.keys = keys
        leeway = Int64(scenario.compatibility.clientSecretIATLeeway)
        clock = scenario.compatibility.clientSecretClock
        audienceArray = scenario.compatibility.clientSecretAudArray
        self.realTime = realTime
    }

    /// The claims of `secret` once its signature is checked (no clock involved), so the time
    /// checks can run inside the operation that uses the clock; throws `invalid_client`. A key
    /// configured with a primary App ID signs for that app group (`groupID`) only. (A secret
    /// remembered as verified was so for its `sub`'s group: a client of another group fails `sub`.)
    func signedClaims(_ secret: String, teamID: String, groupID: String) throws(OAuthError) -> (claims: JSONObject, keyID: String) {
        if let known = verified.claims(of: secret, teamID: teamID) { return known }
        return try verifySignature(secret, teamID: teamID, groupID: groupID)
    }

    /// Refuses a client or key that is still propagating at mock time `now` (§3 [O]): each
    /// answers `invalid_client` until its `propagation_seconds` after `start`, the mock clock's
    /// start or last reset.
    func checkPropagated(client: Scenario.Client, keyID: String, teamID: String, now: Int64, start: Int64) throws(OAuthError) {
        if client.propagationSeconds > 0, now < start &+ Int64(client.propagationSeconds) {
            throw .invalidClient.because(Self.propagating("client_id \(client.clientID)", seconds: Int64(client.propagationSeconds), now: now, start: start))
        }
        if let key = keys[teamID]?[keyID], key.propagationSeconds > 0, now < start &+ key.propagationSeconds {
            throw .invalidClient.because(Self.propagating("developer key \(keyID)", seconds: key.propagationSeconds, now: now, start: start))
        }
    }

    /// The refusal's reason for an item still propagating.
    static func propagating(_ item: String, seconds: Int64, now: Int64, start: Int64) -> String {
        "\(item) is still propagating at Apple until mock time \(time(start &+ seconds)) (propagation_seconds \(seconds) after the clock's "
            + "start \(time(start)); now \(time(now))): move the clock on with POST /__mock/clock"
    }

    /// Checks signed claims for `clientID` of `teamID` at mock time `now` (or real time, as the
    /// scenario's `client_secret_clock` says); throws `invalid_client`.
    package func check(_ claims: JSONObject, clientID: String, teamID: String, now: Int64) throws(OAuthError) {
        let at = clock == .mock ? now : Self.seconds(realTime())
        guard let fault = fault(claims, clientID: clientID, teamID: teamID, at: at) else { return }
        throw .invalidClient.because(reason(fault, claims: claims, clientID: clientID, teamID: teamID, at: at))
    }

    /// The first rule `claims` break at `now`, in Apple's order; nil when they hold.
    private func fault(_ claims: JSONObject, clientID: String, teamID: String, at now: Int64) -> Fault? {
        guard claims["iss"] == .string(teamID) else { return .issuer }
        guard claims["sub"] == .string(clientID) else { return .subject }
        if let fault = audienceFault(claims["aud"]) { return fault }
        guard case .int(let expiresAt)? = claims["exp"] else { return .missing("exp") }
        guard case .int(let issuedAt)? = claims["iat"] else { return .missing("iat") }
        guard expiresAt > now else { return .expired(expiresAt) }
        guard expiresAt - now <= Int64(ClientSecret.maxLifetime) else { return .tooLong(expiresAt) }
        guard issuedAt <= now + leeway else { return .notYetIssued(issuedAt) }
        return nil
    }

    /// What is wrong with `aud`, nil when it names Apple: the string, or an array of exactly that
    /// one string unless the scenario refuses arrays (RFC 7519 §4.1.3 allows both forms).
    private func audienceFault(_ value: JSONValue?) -> Fault? {
        switch value {
        case .string(Self.audience)?:
            return nil
        case .array(let items)?:
            guard items == [.string(Self.audience)] else { return .audienceArray(items) }
            return audienceArray == .accept ? nil : .audienceArrayRefused
        default:
            return .audience
        }
    }

    /// A rule a secret's claims break.
    private enum Fault {
        case issuer, subject, audience
        /// `aud` is an array that is not `["https://appleid.apple.com"]`.
        case audienceArray([JSONValue])
        /// `aud` is `["https://appleid.apple.com"]` and the scenario takes the string only.
        case audienceArrayRefused
        case missing(String)
        case expired(Int64)
        case tooLong(Int64)
        case notYetIssued(Int64)

        var isTime: Bool {
            switch self {
            case .expired, .tooLong, .notYetIssued: true
            default: false
            }
        }
    }

    /// The developer's words for `fault`; for a time rule broken at mock time that real time
    /// would pass, a hint that the backend mints from the real clock. Refusal path only.
    private func reason(_ fault: Fault, claims: JSONObject, clientID: String, teamID: String, at now: Int64) -> String {
        let clockName = clock == .mock ? "mock time" : "real time"
        var text: String
        switch fault {
        case .issuer:
            text = "client_secret iss is \(Self.claim(claims["iss"])) but client_id \(LogText.clip(clientID)) belongs to team \(teamID)"
        case .subject:
            text = "client_secret sub is \(Self.claim(claims["sub"])) but client_id is \(LogText.clip(clientID))"
        case .audience:
            text = "client_secret aud is \(Self.claim(claims["aud"])) but must be \(Self.audience)"
        case .audienceArray(let items):
            let shown = switch items.first {
            case nil: "an empty array"
            case .string(let only)? where items.count == 1: "the array [\"\(LogText.clip(only))\"]"
            case let only? where items.count == 1: "an array of \(Self.claim(only))"
            default: "an array of \(items.count) audiences"
            }
            text = "client_secret aud is \(shown) but must be \(Self.audience) (alone, as a string or a one-element array)"
        case .audienceArrayRefused:
            text = "client_secret aud is an array [\(Self.audience)] but compatibility.client_secret_aud_array is \"refuse\" "
                + "(Apple's text writes aud as a string)"
        case .missing(let name):
            text = "client_secret has no integer \(name) claim (found \(Self.claim(claims[name])))"
        case .expired(let expiresAt):
            text = "client_secret expired at \(clockName) \(Self.time(now)) (exp \(Self.time(expiresAt)))"
        case .tooLong(let expiresAt):
            text = "client_secret exp \(Self.time(expiresAt)) is \(expiresAt &- now) s after \(clockName) \(Self.time(now)), "
                + "over Apple's limit of \(ClientSecret.maxLifetime) s"
        case .notYetIssued(let issuedAt):
            text = "client_secret iat \(Self.time(issuedAt)) is in the future at \(clockName) \(Self.time(now))"
            if leeway > 0 { text += " (leeway \(leeway) s)" }
        }
        if clock == .mock && fault.isTime {
            let real = Self.seconds(realTime())
            if self.fault(claims, clientID: clientID, teamID: teamID, at: real) == nil {
                text += " (mock clock is \(Self.span(now &- real)) of real time; mint the secret from GET /__mock/clock,"
                    + " or set compatibility.client_secret_clock to \"real\")"
            }
        }
        return text
    }

    /// The claims of `secret` when it is an ES256 JWS signed by a developer key of `teamID`.
    /// A backend sends the same secret for months, so a good signature is remembered: the
    /// claims are still checked against the clock on every request.
    private func verifySignature(_ secret: String, teamID: String, groupID: String) throws(OAuthError) -> (claims: JSONObject, keyID: String) {
        let token: CompactJWS
        do {
            token = try CompactJWS.parse(secret)
        } catch {
            throw .invalidClient.because("client_secret is not a JWT (\(error))")
        }
        guard token.header["alg"] == .string("ES256") else {
            throw .invalidClient.because("client_secret alg is \(Self.claim(token.header["alg"])), not ES256")
        }
        guard case .string(let keyID)? = token.header["kid"] else { throw .invalidClient.because("client_secret header has no kid") }
        guard let entry = keys[teamID]?[keyID] else {
            throw .invalidClient.because("client_secret kid \(LogText.clip(keyID)) is not a developer key of team \(teamID)")
        }
        let key = entry.key
        if let primaryAppID = entry.primaryAppID, primaryAppID != groupID {
            throw .invalidClient.because("client_secret kid \(keyID) is configured with the primary App ID \(primaryAppID), not \(groupID)")
        }
        guard token.verifyES256(with: key) else {
            if token.header["crit"] != nil { throw .invalidClient.because("client_secret header has crit, which Apple does not understand") }
            if token.signature.count != 64 {
                // TN3107: a DER (ASN.1) signature, as openssl_sign makes, is refused (§3 [O]).
                throw .invalidClient.because("client_secret signature is \(token.signature.count) bytes, not ES256's raw 64-byte R||S (DER-encoded?)")
            }
            throw .invalidClient.because("client_secret signature does not verify with key \(keyID) of team \(teamID)")
        }
        guard let claims = token.payloadJSON else { throw .invalidClient.because("client_secret payload is not a JSON object") }
        verified.remember(secret, teamID: teamID, claims: claims, keyID: keyID)
        return (claims, keyID)
    }

    /// A claim as the log shows it: a string clipped, anything else by its JSON kind.
    private static func claim(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: LogText.clip(text)
        case nil: "missing"
        case .int(let number)?: "the number \(number)"
        case let other?: ScenarioReader.kind(other)
        }
    }

    /// RFC 3339 for instants between 1970 and 9999, the bare number otherwise.
    static func time(_ seconds: Int64) -> String {
        (0...253_402_300_799).contains(seconds) ? RFC3339.format(seconds) : "\(seconds)"
    }

    /// `400 days ahead`, `3 hours behind`, … for an offset in seconds.
    private static func span(_ offset: Int64) -> String {
        let size = offset.magnitude
        let (count, unit): (UInt64, String) = switch size {
        case 86400...: (size / 86400, "day")
        case 3600...: (size / 3600, "hour")
        case 60...: (size / 60, "minute")
        default: (size, "second")
        }
        return "\(count) \(unit)\(count == 1 ? "" : "s") \(offset >= 0 ? "ahead" : "behind")"
    }

    /// Whole seconds of a real time, clamped like the mock clock's.
    private static func seconds(_ real: Double) -> Int64 {
        let value = real.rounded(.down)
        return value.isFinite ? Int64(max(-1e15, min(1e15, value))) : 0
    }
}

/// Secrets whose signature checked out, per team; bounded, dropped wholesale when full.
private final class VerifiedSecrets: Sendable {
    private static let capacity = 256
    private let entries = Mutex<[String: (teamID: String, claims: JSONObject, keyID: String)]>([:])

    func claims(of secret: String, teamID: String) -> (claims: JSONObject, keyID: String)? {
        entries.withLock { entries in
            guard let entry = entries[secret], entry.teamID == teamID else { return nil }
            return (entry.claims, entry.keyID)
        }
    }

    func remember(_ secret: String, teamID: String, claims: JSONObject, keyID: String) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[secret] = (teamID, claims, keyID)
        }
    }
}

/// A team's Sign in with Apple key as the verifier holds it.
private struct DeveloperKeyEntry: Sendable {
    /// The verifying key.
    let key: P256PublicKey
    /// The primary App ID it is configured with, if any (§3).
    let primaryAppID: String?
    /// Its propagation after the clock's start (`Scenario.DeveloperKey.propagationSeconds`).
    let propagationSeconds: Int64
}
