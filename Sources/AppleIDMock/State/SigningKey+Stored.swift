import JOSE

extension KeyRing.SigningKey: StoredCodable {
    /// `{"kid", "private_key_pem"}`: the private key as unencrypted PKCS#8 PEM, so a restored
    /// mock signs with the same key.
    var stored: JSONValue {
        var object = JSONObject()
        object["kid"] = .string(keyID)
        // Encoding fails only when OpenSSL cannot allocate; the key is then written as null, so
        // loading the file names this field instead of saving trapping.
        object["private_key_pem"] = .optional(try? privateKey.pkcs8PEM)
        return .object(object)
    }

    /// Reads `stored`: a key id as Apple's (`ScenarioRules.isKeyID`) and an RSA-2048 private key,
    /// as every signing key is (key files and `POST /__mock/keys` refuse other sizes).
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let keyID = try reader.string("kid") { ScenarioRules.isKeyID($0) ? nil : ScenarioRules.keyIDExpectation }
        let pem = try reader.string("private_key_pem")
        let privateKey: RSAPrivateKey
        do {
            privateKey = try RSAPrivateKey(pem: pem)
        } catch {
            throw reader.error("private_key_pem", "expected an RSA private key in PEM (\(error))")
        }
        guard privateKey.bits == 2048 else { throw reader.error("private_key_pem", "expected an RSA-2048 key, found \(privateKey.bits) bits") }
        try reader.finish()
        self.init(keyID: keyID, privateKey: privateKey)
    }
}
