import JOSE

/// A server-to-server notification derived from an account event, signed and sent later. It
/// keeps the JWT payload as bytes (one allocation): outbox and delivery log hold thousands.
struct PendingNotification: Sendable, Equatable {
    /// The JWT payload as it will be signed: the compact JSON of the claims (`iss`, `aud`, `iat`,
    /// `exp`, `jti`, `events`).
    package let payload: [UInt8]
    /// The event's `type`.
    package let type: String
    /// The app group's primary App ID (the `aud`).
    let groupID: String
    /// Where it goes; nil when the app group registered no URL.
    package let url: String?
    /// The user it is about.
    let userID: String
    /// The sequence number of the event it was derived from: the operation that caused it knows
    /// it, so it finds its own record in the delivery log.
    let sequence: UInt64
    /// The kid of the key to sign it with: the signer when its event happened.
    package var keyID: String? = nil

    /// The claims, read back from the payload.
    var claims: JSONObject { Self.claims(payload) }

    /// The claims of a compact JSON payload (empty for anything else).
    static func claims(_ payload: [UInt8]) -> JSONObject {
        guard case .object(let claims)? = try? JSONParser.parse(payload) else { return JSONObject() }
        return claims
    }

    /// The event object of `claims`, whether `events` carries it as a JSON string (Apple's
    /// payloads) or as an object (Apple's examples).
    static func event(_ claims: JSONObject) -> JSONObject {
        switch claims["events"] {
        case .object(let event)?: return event
        case .string(let text)?:
            guard case .object(let event)? = try? JSONParser.parse(Array(text.utf8)) else { return JSONObject() }
            return event
        default: return JSONObject()
        }
    }
}
