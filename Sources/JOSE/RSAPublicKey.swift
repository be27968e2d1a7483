/// An RSA public key for RS256 verification.
public struct RSAPublicKey: Sendable {
    /// The owned OpenSSL key (public half only).
    private let key: EVPKey
    /// The modulus, big-endian, without leading zero bytes.
    public let modulus: [UInt8]
    /// The public exponent, big-endian, without leading zero bytes.
    public let exponent: [UInt8]

    /// Wraps a key already checked to be RSA.
    init(checked key: EVPKey) throws(JOSEError) {
        try RSAPublicKey.checkSize(key)
        self.key = key
        self.modulus = try key.bigNumber("n")
        self.exponent = try key.bigNumber("e")
    }

    /// The key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`), encoded when asked: OpenSSL's
    /// encoders are a good part of loading a key, and serving needs only `n` and `e`.
    public var pem: String {
        get throws(JOSEError) { try key.publicPEM() }
    }

    /// Refuses keys outside `RSAPrivateKey.minimumBits...maximumBits`.
    static func checkSize(_ key: EVPKey) throws(JOSEError) {
        let bits = key.bits
        guard (RSAPrivateKey.minimumBits...RSAPrivateKey.maximumBits).contains(bits) else {
            throw JOSEError.invalidKey("RSA key size \(bits) outside \(RSAPrivateKey.minimumBits)...\(RSAPrivateKey.maximumBits)")
        }
    }

    /// Reads SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`); other key types are refused.
    public init(pem: String) throws(JOSEError) {
        let key = try EVPKey.readPublic(pem: pem)
        guard key.isA("RSA") else { throw JOSEError.invalidKey("not an RSA public key") }
        try self.init(checked: key)
    }

    /// A key from big-endian modulus and exponent bytes (a JWK's decoded `n` and `e`).
    /// Leading zero bytes are ignored; the exponent must be odd and greater than 1.
    public init(modulus: [UInt8], exponent: [UInt8]) throws(JOSEError) {
        let n = Array(modulus.drop { $0 == 0 })
        let e = Array(exponent.drop { $0 == 0 })
        guard let lastN = n.last, lastN & 1 == 1 else { throw JOSEError.invalidKey("RSA modulus must be odd and non-zero") }
        guard let lastE = e.last, lastE & 1 == 1, e != [1] else {
            throw JOSEError.invalidKey("RSA exponent must be odd and greater than 1")
        }
        guard e.count <= 8 else { throw JOSEError.invalidKey("RSA exponent longer than 64 bits") }
        try self.init(checked: EVPKey.rsaPublic(modulus: n, exponent: e))
    }

    /// Whether `signature` is a valid RSASSA-PKCS1-v1_5 SHA-256 signature over `message`.
    public func verifyRS256(signature: [UInt8], message: some Sequence<UInt8>) -> Bool {
        key.verifySHA256(signature: signature, message: Array(message))
    }
}
