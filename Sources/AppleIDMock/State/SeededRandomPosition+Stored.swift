import JOSE

extension SeededRandom.Position: StoredCodable {
    /// `{"key": base64url, "next_block", "pending": base64url}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["key"] = .base64URL(key)
        object["next_block"] = .storedInteger(nextBlock)
        object["pending"] = .base64URL(pending)
        return .object(object)
    }

    /// Reads `stored`: a 32-byte key, a next block below 2^53 and at most a block (32 bytes)
    /// pending, what `SeededRandom(position:)` and `RandomSource(position:)` accept.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let key = try reader.bytes("key", count: 32...32)
        let nextBlock = UInt64(try reader.int64("next_block", in: StoredRange.counts))
        let pending = try reader.bytes("pending", count: 0...32)
        try reader.finish()
        self.init(key: key, nextBlock: nextBlock, pending: pending)
    }
}
