import JOSE

/// How the mock began — what the events that follow are applied to: the token MAC secret, the
/// clock and mock time at start, and the signing keys it started with (private halves
/// included: a restart must sign with the same keys even when they were generated).
struct StateGenesis: Sendable, Equatable {
    /// The token MAC secret at start (a reset brings its own).
    var secret: [UInt8]
    /// The clock at start.
    var clock: MockClock
    /// Mock time at start, whole seconds (the timeline counts from it).
    var start: Int64
    /// The keys the mock started with, and the one that signed.
    var keys: [KeyRing.SigningKey]
    var activeKeyID: String

    /// The genesis as stored.
    var stored: JSONValue {
        var object = JSONObject()
        object["secret"] = .string(Base64URL.encode(secret))
        object["clock"] = clock.stored
        object["start"] = .int(start)
        object["keys"] = .array(keys.map(\.stored))
        object["active_kid"] = .string(activeKeyID)
        return .object(object)
    }

    /// Reads a stored genesis, naming the field at fault under `path`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        guard case .object(let object) = stored else { throw StoredStateError(path: path, message: "expected an object") }
        guard case .string(let text)? = object["secret"], let secret = Base64URL.decode(text), secret.count == 32 else {
            throw StoredStateError(path: path + ".secret", message: "expected 32 bytes in base64url")
        }
        guard let clockJSON = object["clock"] else { throw StoredStateError(path: path + ".clock", message: "expected a clock") }
        guard case .int(let start)? = object["start"], StoredRange.seconds.contains(start) else {
            throw StoredStateError(path: path + ".start", message: StoredRange.expectation(StoredRange.seconds))
        }
        guard case .array(let keyList)? = object["keys"], !keyList.isEmpty, keyList.count <= 1000 else {
            throw StoredStateError(path: path + ".keys", message: "expected 1 to 1000 keys")
        }
        var keys: [KeyRing.SigningKey] = []
        for (index, key) in keyList.enumerated() { keys.append(try KeyRing.SigningKey(stored: key, path: "\(path).keys[\(index)]")) }
        guard case .string(let active)? = object["active_kid"], keys.contains(where: { $0.keyID == active }) else {
            throw StoredStateError(path: path + ".active_kid", message: "expected the kid of one of the keys")
        }
        self.init(secret: secret, clock: try MockClock(stored: clockJSON, path: path + ".clock"), start: start, keys: keys, activeKeyID: active)
    }

    /// A genesis.
    init(secret: [UInt8], clock: MockClock, start: Int64, keys: [KeyRing.SigningKey], activeKeyID: String) {
        self.secret = secret
        self.clock = clock
        self.start = start
        self.keys = keys
        self.activeKeyID = activeKeyID
    }
}
