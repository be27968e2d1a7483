import JOSE

extension ResetRecord: StoredCodable {
    /// `{"clock": {…}, "now", "secret": base64url, "first_consent_id"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["clock"] = clock.stored
        object["now"] = .int(now)
        object["secret"] = .base64URL(secret)
        object["first_consent_id"] = .int(Int64(firstConsentID))
        return .object(object)
    }

    /// Reads `stored`: the MAC secret is 32 bytes, as every reset draws.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(clock: try reader.decode("clock"), now: try reader.int64("now", in: StoredRange.seconds), secret: try reader.bytes("secret", count: 32...32),
                  firstConsentID: try reader.uint32("first_consent_id"))
        try reader.finish()
    }
}
