/// A P-256 (secp256r1) public key for ES256 verification.
public struct P256PublicKey: Sendable {
    /// The owned OpenSSL key (public half only).
    private let key: EVPKey

    /// Wraps a key already checked to be on P-256.
    init(checked key: EVPKey) {
        self.key = key
    }

    /// The key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`), encoded when asked.
    public var pem: String {
        get throws(JOSEError) { try key.publicPEM() }
    }

    /// Refuses anything but an EC key on the named curve P-256 (OpenSSL's "prime256v1").
    static func checkCurve(_ key: EVPKey) throws(JOSEError) {
        guard key.isA("EC") else { throw JOSEError.invalidKey("not an EC key") }
        let group = key.groupName
        guard group == "prime256v1" || group == "P-256" else {
            throw JOSEError.invalidKey("EC key on \(group ?? "an unnamed curve"), not P-256")
        }
    }

    /// Reads SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`) holding a P-256 key.
    public init(pem: String) throws(JOSEError) {
        let key = try EVPKey.readPublic(pem: pem)
        try P256PublicKey.checkCurve(key)
        self.init(checked: key)
    }

    /// Whether `signature` is a valid raw 64-byte `r || s` ES256 signature over `message`.
    /// DER-encoded signatures are refused, as Apple refuses them in client secrets.
    public func verifyES256(signature: [UInt8], message: some Sequence<UInt8>) -> Bool {
        // RFC 7518 §3.4: the JWS signature is exactly R || S, 32 bytes each for P-256.
        guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
        return key.verifySHA256(signature: der, message: Array(message))
    }
}
