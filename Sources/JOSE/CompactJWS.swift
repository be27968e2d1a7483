/// A JWS in compact serialization (RFC 7515 §7.1): `header.payload.signature`.
public struct CompactJWS: Sendable {
    /// The largest token `parse` accepts, in bytes.
    public static let maximumLength = 64 * 1024

    /// The decoded protected header.
    public let header: JSONObject
    /// The header exactly as it appears in the token.
    public let headerSegment: String
    /// The payload exactly as it appears in the token.
    public let payloadSegment: String
    /// The decoded payload.
    public let payload: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]

    /// Assembles a token from parts without signing (for tokens built by hand, e.g. in tests).
    /// The header is written compactly in the order given.
    public init(header: JSONObject, payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.headerSegment = Base64URL.encode(JSONWriter.compact(.object(header)))
        self.payloadSegment = Base64URL.encode(payload)
        self.payload = payload
        self.signature = signature
    }

    /// Wraps already-validated parts.
    private init(header: JSONObject, headerSegment: String, payloadSegment: String, payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.headerSegment = headerSegment
        self.payloadSegment = payloadSegment
        self.payload = payload
        self.signature = signature
    }

    /// The ASCII bytes of `headerSegment.payloadSegment`, which the signature covers.
    public var signingInput: [UInt8] {
        Array(headerSegment.utf8) + [UInt8(ascii: ".")] + Array(payloadSegment.utf8)
    }

    /// The token text.
    public var compact: String {
        let signatureSegment = Base64URL.encode(signature)
        // Built in a buffer of the exact size: the token is often kept (a delivery log holds thousands).
        var text = String()
        text.reserveCapacity(headerSegment.utf8.count + payloadSegment.utf8.count + signatureSegment.utf8.count + 2)
        text += headerSegment
        text += "."
        text += payloadSegment
        text += "."
        text += signatureSegment
        return text
    }

    /// The header's `alg`, if it is a string.
    public var algorithm: String? {
        header["alg"]?.stringValue
    }

    /// The header's `kid`, if it is a string.
    public var keyID: String? {
        header["kid"]?.stringValue
    }

    /// The payload parsed as JSON, when it is a JSON object.
    public var payloadJSON: JSONObject? {
        (try? JSONParser.parse(payload))?.objectValue
    }

    /// Parses a compact token: exactly three base64url segments, a JSON-object header with a
    /// string `alg`, at most `maximumLength` bytes. Does not verify anything.
    public static func parse(_ token: some StringProtocol) throws(JOSEError) -> CompactJWS {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumLength else {
            throw JOSEError.malformedJWS("token longer than \(maximumLength) bytes")
        }
        let segments = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw JOSEError.malformedJWS("expected 3 segments, found \(segments.count)")
        }
        let headerSegment = String(decoding: segments[0], as: UTF8.self)
        let payloadSegment = String(decoding: segments[1], as: UTF8.self)
        let signatureSegment = String(decoding: segments[2], as: UTF8.self)
        guard let headerBytes = Base64URL.decode(headerSegment), !headerBytes.isEmpty else {
            throw JOSEError.malformedJWS("header is not base64url")
        }
        guard let payload = Base64URL.decode(payloadSegment) else {
            throw JOSEError.malformedJWS("payload is not base64url")
        }
        guard let signature = Base64URL.decode(signatureSegment) else {
            throw JOSEError.malformedJWS("signature is not base64url")
        }
        let headerValue: JSONValue
        do {
            headerValue = try JSONParser.parse(headerBytes)
        } catch {
            throw JOSEError.malformedJWS("header is not JSON: \(error)")
        }
        guard let header = headerValue.objectValue else {
            throw JOSEError.malformedJWS("header is not a JSON object")
        }
        guard header["alg"]?.stringValue != nil else {
            throw JOSEError.malformedJWS("header has no string \"alg\"")
        }
        return CompactJWS(
            header: header,
            headerSegment: headerSegment,
            payloadSegment: payloadSegment,
            payload: payload,
            signature: signature
        )
    }

    /// Signs `payload` with RS256 under the header `{"kid":"<kid>","alg":"RS256"}`, byte for
    /// byte Apple's id_token header (apple-behaviour.md §4: kid first, no typ).
    public static func signRS256(payload: [UInt8], kid: String, key: RSAPrivateKey) throws(JOSEError) -> CompactJWS {
        let header = JSONObject([("kid", .string(kid)), ("alg", "RS256")])
        let unsigned = CompactJWS(header: header, payload: payload, signature: [])
        return CompactJWS(header: header, payload: payload, signature: try key.signRS256(unsigned.signingInput))
    }

    /// Signs `payload` with ES256 under `header`, written compactly in the order given.
    /// The header's `alg` must be "ES256".
    public static func signES256(header: JSONObject, payload: [UInt8], key: P256PrivateKey) throws(JOSEError) -> CompactJWS {
        guard header["alg"]?.stringValue == "ES256" else {
            throw JOSEError.unsupportedAlgorithm("signES256 needs header alg \"ES256\"")
        }
        let unsigned = CompactJWS(header: header, payload: payload, signature: [])
        return CompactJWS(header: header, payload: payload, signature: try key.signES256(unsigned.signingInput))
    }

    /// Whether the header says RS256 and the signature verifies under `key`. A token with a
    /// `crit` header fails: this layer understands no extensions (RFC 7515 §4.1.11).
    public func verifyRS256(with key: RSAPublicKey) -> Bool {
        guard algorithm == "RS256", header["crit"] == nil else { return false }
        return key.verifyRS256(signature: signature, message: signingInput)
    }

    /// Whether the header says ES256 and the raw 64-byte signature verifies under `key`. A
    /// token with a `crit` header fails (RFC 7515 §4.1.11).
    public func verifyES256(with key: P256PublicKey) -> Bool {
        guard algorithm == "ES256", header["crit"] == nil else { return false }
        return key.verifyES256(signature: signature, message: signingInput)
    }
}
