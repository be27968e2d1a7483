import AppleIDMock
import JOSE
import Synchronization

/// Checks one server-to-server notification body, `{"payload": "<JWT>"}`, as a careful
/// receiver would (apple-behaviour.md §7): RS256 under a key the running mock publishes at
/// `/auth/keys` (fetched again when the `kid` is unknown), `iss`, `aud`, the times against the
/// mock's clock (`/__mock/clock`, read for each notification: the mock clock may have been
/// moved away from real time), and the `events` claim as a JSON-encoded string or an object.
/// Blocks while it fetches: call it from a thread made to wait, never from the cooperative pool.
final class NotificationVerifier: Sendable {
    /// A verified notification: what it says and the key that signed it.
    struct Verified {
        /// The `kid` of the signing key.
        let keyID: String
        /// The JWT's claims.
        let claims: JSONObject
        /// The decoded `events` claim.
        let event: JSONObject
        /// How `events` was carried: `"string"` (JSON-encoded, as Apple sends) or `"object"`.
        let eventsFormat: String
    }

    /// Why a notification was refused, in words for its `REJECTED` line.
    struct Rejection: Error {
        /// The reason.
        let reason: String
    }

    /// Seconds an `iat` may lie after the mock's now (its clock is read after the JWT was signed).
    static let issuedAtLeeway: Int64 = 60
    /// Largest notification body accepted.
    static let maxBodyBytes = CompactJWS.maximumLength + 1024

    private let mock: ControlClient
    private let issuer: String
    private let clientID: String?
    private let keys = Mutex<JWKSet?>(nil)

    /// A verifier against the mock `mock` reaches, expecting `issuer` and, when given, `clientID` as `aud`.
    init(mock: ControlClient, issuer: String, clientID: String?) {
        self.mock = mock
        self.issuer = issuer
        self.clientID = clientID
    }

    /// Verifies a notification request body.
    func verify(body: [UInt8]) throws(Rejection) -> Verified {
        guard body.count <= Self.maxBodyBytes else { throw Rejection(reason: "body larger than \(Self.maxBodyBytes) bytes") }
        guard case .object(let object)? = try? JSONParser.parse(body), let jwt = object["payload"]?.stringValue else {
            throw Rejection(reason: #"body is not {"payload": "<JWT>"}"#)
        }
        let token: CompactJWS
        do { token = try CompactJWS.parse(jwt) } catch { throw Rejection(reason: "payload is not a compact JWS: \(error)") }
        guard token.algorithm == "RS256" else { throw Rejection(reason: "alg is \(token.algorithm ?? "missing"), expected RS256") }
        guard let keyID = token.keyID else { throw Rejection(reason: "header has no kid") }
        let key = try publicKey(keyID)
        guard token.verifyRS256(with: key) else { throw Rejection(reason: "signature does not verify with kid \(keyID) from \(mock.server)/auth/keys") }
        guard let claims = token.payloadJSON else { throw Rejection(reason: "claims are not a JSON object") }
        let iss = claims["iss"]?.stringValue
        guard iss == issuer else { throw Rejection(reason: "iss is \(Self.show(claims["iss"])), expected \(issuer) (--issuer)") }
        guard let aud = claims["aud"]?.stringValue, !aud.isEmpty else { throw Rejection(reason: "aud is \(Self.show(claims["aud"])), expected a client id") }
        if let clientID, aud != clientID { throw Rejection(reason: "aud is \(aud), expected \(clientID) (--client-id)") }
        try checkTimes(claims)
        let (event, format) = try Self.event(claims)
        return Verified(keyID: keyID, claims: claims, event: event, eventsFormat: format)
    }

    /// `iat` and `exp` are integers, `iat` ≤ `exp`, and the mock's now lies between them
    /// (`iat` up to `issuedAtLeeway` ahead). Real time is never used: the mock clock may be moved.
    private func checkTimes(_ claims: JSONObject) throws(Rejection) {
        guard let iat = claims["iat"]?.intValue else { throw Rejection(reason: "iat is \(Self.show(claims["iat"])), expected seconds") }
        guard let exp = claims["exp"]?.intValue else { throw Rejection(reason: "exp is \(Self.show(claims["exp"])), expected seconds") }
        guard iat <= exp else { throw Rejection(reason: "exp \(exp) is before iat \(iat)") }
        let now = try mockNow()
        guard now < exp else { throw Rejection(reason: "expired: exp \(exp) is not after the mock's now \(now)") }
        let latest = now.addingReportingOverflow(Self.issuedAtLeeway)
        guard iat <= (latest.overflow ? Int64.max : latest.partialValue) else { throw Rejection(reason: "iat \(iat) is after the mock's now \(now)") }
    }

    /// The mock clock's now, in seconds.
    private func mockNow() throws(Rejection) -> Int64 {
        let answer: (status: Int, text: String)
        do { answer = try mock.send("GET", "/__mock/clock") } catch { throw Rejection(reason: "cannot read the mock's clock: \(Self.describe(error))") }
        guard answer.status == 200, case .object(let clock)? = try? JSONParser.parse(Array(answer.text.utf8)), let epoch = clock["epoch"]?.intValue else {
            throw Rejection(reason: "cannot read the mock's clock: \(mock.server)/__mock/clock answered \(answer.status)")
        }
        return epoch
    }

    /// The key `keyID` among the mock's published keys, fetching them again when it is unknown
    /// (a rotation published a new key since the last fetch).
    private func publicKey(_ keyID: String) throws(Rejection) -> RSAPublicKey {
        var jwk = keys.withLock { $0?.key(withID: keyID) }
        if jwk == nil {
            let fetched = try fetchKeys()
            keys.withLock { $0 = fetched }
            jwk = fetched.key(withID: keyID)
        }
        guard let jwk else { throw Rejection(reason: "kid \(keyID) is not published at \(mock.server)/auth/keys") }
        do { return try jwk.rsaPublicKey() } catch { throw Rejection(reason: "kid \(keyID): \(error)") }
    }

    private func fetchKeys() throws(Rejection) -> JWKSet {
        let answer: (status: Int, text: String)
        do { answer = try mock.send("GET", "/auth/keys") } catch { throw Rejection(reason: "cannot fetch the mock's keys: \(Self.describe(error))") }
        guard answer.status == 200, let json = try? JSONParser.parse(Array(answer.text.utf8)), let set = try? JWKSet(json: json) else {
            throw Rejection(reason: "cannot fetch the mock's keys: \(mock.server)/auth/keys answered \(answer.status)")
        }
        return set
    }

    /// The `events` claim decoded, and how it was carried (`events_claim_format`): a string
    /// holding a JSON object (Apple's real payloads, §7 [O]) or an object (Apple's examples).
    /// It must name a `type` and a `sub`.
    static func event(_ claims: JSONObject) throws(Rejection) -> (JSONObject, String) {
        let event: JSONObject
        let format: String
        switch claims["events"] {
        case .object(let object)?:
            (event, format) = (object, "object")
        case .string(let text)?:
            guard case .object(let object)? = try? JSONParser.parse(Array(text.utf8)) else {
                throw Rejection(reason: "events is a string that does not hold a JSON object")
            }
            (event, format) = (object, "string")
        default:
            throw Rejection(reason: "events is \(show(claims["events"])), expected a JSON-encoded object or an object")
        }
        guard let type = event["type"]?.stringValue, !type.isEmpty else { throw Rejection(reason: "events has no type") }
        guard event["sub"]?.stringValue?.isEmpty == false else { throw Rejection(reason: "events (\(type)) has no sub") }
        return (event, format)
    }

    private static func describe(_ error: any Error) -> String {
        (error as? CommandFailure)?.message ?? "\(error)"
    }

    /// A claim as it appears, for a message: its JSON (strings quoted) or `missing`.
    private static func show(_ value: JSONValue?) -> String {
        guard let value else { return "missing" }
        let text = String(decoding: JSONWriter.compact(value), as: UTF8.self)
        return text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}

