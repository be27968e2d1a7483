/// An RSA private key for RS256 signing.
public struct RSAPrivateKey: Sendable {
    /// Keys below this size are refused (RFC 7518 §3.3 requires 2048 bits or more).
    public static let minimumBits = 2048
    /// Keys above this size are refused, bounding the cost of every operation.
    public static let maximumBits = 16384

    /// The owned OpenSSL key.
    private let key: EVPKey
    /// The public half.
    public let publicKey: RSAPublicKey

    /// Wraps a key already checked to be RSA.
    init(checked key: EVPKey) throws(JOSEError) {
        try RSAPublicKey.checkSize(key)
        self.key = key
        // The public half from `n` and `e` (EVP_PKEY_fromdata): a DER round trip through
        // OpenSSL's decoders costs several times more, and key loading is most of a cold start.
        self.publicKey = try RSAPublicKey(checked: EVPKey.rsaPublic(modulus: key.bigNumber("n"), exponent: key.bigNumber("e"), checked: false))
    }

    /// The key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`), encoded when asked.
    public var pkcs8PEM: String {
        get throws(JOSEError) { try key.pkcs8PEM() }
    }

    /// A fresh key with public exponent 65537.
    public static func generate(bits: Int = 2048) throws(JOSEError) -> RSAPrivateKey {
        guard (minimumBits...maximumBits).contains(bits) else {
            throw JOSEError.invalidKey("RSA key size \(bits) outside \(minimumBits)...\(maximumBits)")
        }
        return try RSAPrivateKey(checked: EVPKey.generateRSA(bits: bits))
    }

    /// Reads PKCS#8 (`BEGIN PRIVATE KEY`) or PKCS#1 (`BEGIN RSA PRIVATE KEY`) PEM; other key
    /// types and encrypted PEM are refused.
    public init(pem: String) throws(JOSEError) {
        let key = try EVPKey.readPrivate(pem: pem)
        guard key.isA("RSA") else { throw JOSEError.invalidKey("not an RSA private key") }
        try self.init(checked: key)
    }

    /// The modulus size in bits.
    public var bits: Int {
        key.bits
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message` (RFC 7518 §3.3); as long as the modulus.
    public func signRS256(_ message: some Sequence<UInt8>) throws(JOSEError) -> [UInt8] {
        try key.signSHA256(Array(message))
    }
}
