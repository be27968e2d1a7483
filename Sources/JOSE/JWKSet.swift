/// A JSON Web Key Set (RFC 7517 §5): `{"keys":[...]}`.
public struct JWKSet: Sendable, Equatable {
    /// The keys in order.
    public var keys: [JWK]

    /// A set of these keys.
    public init(keys: [JWK]) {
        self.keys = keys
    }

    /// Reads `{"keys":[...]}`. Entries whose `kty` is not "RSA" are skipped (RFC 7517 §5:
    /// ignore key types not understood); a malformed RSA entry is an error.
    public init(json: JSONValue) throws(JOSEError) {
        guard let entries = json.objectValue?["keys"]?.arrayValue else {
            throw JOSEError.malformedJWS("JWK Set is not an object with a \"keys\" array")
        }
        var keys: [JWK] = []
        for entry in entries {
            guard let kty = entry.objectValue?["kty"]?.stringValue else {
                throw JOSEError.malformedJWS("JWK without a string kty")
            }
            guard kty == "RSA" else { continue }
            keys.append(try JWK(json: entry))
        }
        self.keys = keys
    }

    /// `{"keys":[...]}` with each key in Apple's member order.
    public var json: JSONValue {
        .object(JSONObject([("keys", .array(keys.map(\.json)))]))
    }

    /// The first key whose `kid` is `kid`.
    public func key(withID kid: String) -> JWK? {
        keys.first { $0.kid == kid }
    }
}
