import JOSE
import MiniHTTP

/// `/__mock/keys`: the signing keys' life as Apple runs it (apple-behaviour.md §1.5) — publish a
/// key weeks before it signs, activate it, retire the old one weeks after.
///
/// - `GET /__mock/keys` → `{"active_kid", "keys": [{"kid", "state", "published_at", "activated_at", "retired_at"}]}`
/// - `POST /__mock/keys` `{"kid"?, "pem"?}` → 201 `{"kid", "state": "published"}` (a fresh RSA-2048 key unless `pem`)
/// - `POST /__mock/keys/rotate` → `{"kid", "previous", "retired", "state": "active"}`: publish and
///   activate at once, retiring the oldest keys beyond `signing_keys.max_published`
/// - `POST /__mock/keys/{kid}/activate` → `{"kid", "state": "active"}`
/// - `DELETE /__mock/keys/{kid}` → `{"kid", "state": "retired"}`; the signing key → 409
struct KeysControlEndpoint: Sendable {
    let domain: AppleIDDomain

    /// Lists every key the mock has known, or with `?state=` those in that state.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.listKeys)
        let state = try query["state"].map { value throws(ControlRequest.Failure) in
            guard let state = KeyRecord.State(rawValue: value) else {
                throw ControlRequest.Failure(message: "expected published, active or retired", field: "state")
            }
            return state
        }
        let (keys, signingKeyID) = domain.keys
        var answer = JSONObject()
        answer["active_kid"] = signingKeyID.map(JSONValue.string) ?? .null
        answer["keys"] = .array(keys.filter { state == nil || $0.state == state }.map { record in
            var key = JSONObject()
            key["kid"] = .string(record.keyID)
            key["state"] = .string(record.state.rawValue)
            key["published_at"] = .string(RFC3339.format(record.publishedAt))
            key["activated_at"] = record.activatedAt.map { .string(RFC3339.format($0)) } ?? .null
            key["retired_at"] = record.retiredAt.map { .string(RFC3339.format($0)) } ?? .null
            return .object(key)
        })
        return ControlResponse.json(.object(answer))
    }

    /// Publishes a supplied or fresh key (the domain generates it off the pool).
    func publish(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.publishKey)
        let (kid, pem) = (try body.optionalString("kid", maxBytes: 64), try body.optionalString("pem", maxBytes: 64 * 1024))
        if let kid, !ScenarioRules.isKeyID(kid) { throw ControlRequest.Failure(message: ScenarioRules.keyIDExpectation, field: "kid") }
        var privateKey: RSAPrivateKey?
        if let pem {
            let key: RSAPrivateKey
            do {
                key = try RSAPrivateKey(pem: pem)
            } catch {
                throw ControlRequest.Failure(message: "expected a PEM RSA private key (PKCS#8): \(error)", field: "pem")
            }
            guard key.bits == 2048 else { throw ControlRequest.Failure(message: "expected an RSA-2048 key, found \(key.bits) bits", field: "pem") }
            privateKey = key
        }
        let keyID = try await domain.publishKey(keyID: kid, privateKey: privateKey)
        return ControlResponse.json(.object(["kid": .string(keyID), "state": "published"]), status: HTTPStatus(201))
    }

    /// Publishes a fresh key (the domain generates it off the pool) and makes it sign.
    func rotate(_ request: HTTPRequest) async throws -> HTTPResponse {
        _ = try ControlRequest(request, for: ControlOperations.rotateKeys)
        let (keyID, previous, retired) = try await domain.rotateKeys()
        return ControlResponse.json(.object(["kid": .string(keyID), "previous": previous.map(JSONValue.string) ?? .null,
                                             "retired": .array(retired.map(JSONValue.string)), "state": "active"]))
    }

    /// `POST /__mock/keys/{kid}/activate`: makes the key sign.
    func activate(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let keyID = Self.keyID(request) else { return ControlResponse.notFound(request) }
        _ = try ControlRequest(request, for: ControlOperations.activateKey)
        try domain.activateKey(keyID)
        return ControlResponse.json(.object(["kid": .string(keyID), "state": "active"]))
    }

    /// `DELETE /__mock/keys/{kid}`: retires the key.
    func retire(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let keyID = Self.keyID(request) else { return ControlResponse.notFound(request) }
        try domain.retireKey(keyID)
        return ControlResponse.json(.object(["kid": .string(keyID), "state": "retired"]))
    }

    /// The route's `{kid}`, percent-decoded; nil when its encoding is malformed (answered as
    /// a path no route takes).
    private static func keyID(_ request: HTTPRequest) -> String? {
        request.pathParameters["kid"].flatMap(HTTPForm.percentDecode)
    }
}
