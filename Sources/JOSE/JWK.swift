/// An RSA signing key in JSON Web Key form (RFC 7517), shaped like Apple's `/auth/keys` entries.
public struct JWK: Sendable, Equatable {
    /// Key type; always "RSA" here.
    public var kty: String
    /// Key id, matched against a JWS header's `kid`.
    public var kid: String
    /// Intended use; "sig" for Apple's keys.
    public var use: String
    /// Algorithm; "RS256" for Apple's keys.
    public var alg: String
    /// Base64url modulus.
    public var n: String
    /// Base64url public exponent.
    public var e: String

    /// The JWK for `publicKey` with `use` "sig" and `alg` "RS256".
    public init(kid: String, publicKey: RSAPublicKey) {
        self.kty = "RSA"
        self.kid = kid
        self.use = "sig"
        self.alg = "RS256"
        self.n = Base64URL.encode(publicKey.modulus)
        self.e = Base64URL.encode(publicKey.exponent)
    }

    /// Reads an RSA JWK. All six members must be strings, `kty` must be "RSA" and `n`/`e`
    /// valid base64url; other members are ignored.
    public init(json: JSONValue) throws(JOSEError) {
        guard let object = json.objectValue else { throw JOSEError.malformedJWS("JWK is not a JSON object") }
        func member(_ name: String) throws(JOSEError) -> String {
            guard let value = object[name]?.stringValue else {
                throw JOSEError.malformedJWS("JWK member \"\(name)\" missing or not a string")
            }
            return value
        }
        kty = try member("kty")
        guard kty == "RSA" else { throw JOSEError.unsupportedAlgorithm("JWK kty \(kty)") }
        kid = try member("kid")
        use = try member("use")
        alg = try member("alg")
        n = try member("n")
        e = try member("e")
        guard Base64URL.decode(n) != nil, Base64URL.decode(e) != nil else {
            throw JOSEError.malformedJWS("JWK n or e is not base64url")
        }
    }

    /// The JWK as JSON with members in Apple's order: kty, kid, use, alg, n, e.
    public var json: JSONValue {
        .object(JSONObject([
            ("kty", .string(kty)),
            ("kid", .string(kid)),
            ("use", .string(use)),
            ("alg", .string(alg)),
            ("n", .string(n)),
            ("e", .string(e)),
        ]))
    }

    /// The RSA public key this JWK describes.
    public func rsaPublicKey() throws(JOSEError) -> RSAPublicKey {
        guard kty == "RSA" else { throw JOSEError.unsupportedAlgorithm("JWK kty \(kty)") }
        guard let modulus = Base64URL.decode(n), let exponent = Base64URL.decode(e) else {
            throw JOSEError.malformedJWS("JWK n or e is not base64url")
        }
        return try RSAPublicKey(modulus: modulus, exponent: exponent)
    }
}
