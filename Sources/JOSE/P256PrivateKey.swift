/// A P-256 (secp256r1) private key for ES256 signing, e.g. an Apple `.p8` key.
public struct P256PrivateKey: Sendable {
    /// The owned OpenSSL key.
    private let key: EVPKey
    /// The public half.
    public let publicKey: P256PublicKey

    /// Wraps a key already checked to be on P-256.
    private init(checked key: EVPKey) throws(JOSEError) {
        self.key = key
        self.publicKey = P256PublicKey(checked: try key.publicOnly())
    }

    /// The key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`), the `.p8` shape; encoded when asked.
    public var pkcs8PEM: String {
        get throws(JOSEError) { try key.pkcs8PEM() }
    }

    /// A fresh key.
    public static func generate() throws(JOSEError) -> P256PrivateKey {
        try P256PrivateKey(checked: EVPKey.generateP256())
    }

    /// Reads PKCS#8 (`BEGIN PRIVATE KEY`, Apple's `.p8`) or SEC 1 (`BEGIN EC PRIVATE KEY`)
    /// PEM; RSA keys, other curves and encrypted PEM are refused.
    public init(pem: String) throws(JOSEError) {
        let key = try EVPKey.readPrivate(pem: pem)
        try P256PublicKey.checkCurve(key)
        try self.init(checked: key)
    }

    /// ECDSA P-256 SHA-256 over `message` as JOSE's raw 64-byte `r || s` (RFC 7518 §3.4).
    public func signES256(_ message: some Sequence<UInt8>) throws(JOSEError) -> [UInt8] {
        try ECDSASignature.raw(fromDER: key.signSHA256(Array(message)))
    }
}
