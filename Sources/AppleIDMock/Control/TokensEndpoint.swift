import JOSE
import MiniHTTP

/// `POST /__mock/tokens`: a token for a backend's own security tests, genuine or wrong in one way
/// (`TokenDefect`). Changes nothing.
///
/// Body: `{"kind": "id_token"|"notification", "user", "client_id", "nonce"?, "claims"?: {…},
/// "defect"?: NAME, "type"?: EVENT}`; `claims` are set over the token's own (null removes one);
/// `type` is the notification's event (default `consent-revoked`). Answer: `{"id_token": …}` or,
/// for a notification, `{"payload": …}` (the body Apple posts), with `defect` and `check` (what
/// refuses it; null for a genuine token).
struct TokensEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.forgeToken)
        let kindName = try body.optionalString("kind", maxBytes: 64) ?? AppleIDDomain.ForgedKind.identityToken.rawValue
        guard let kind = AppleIDDomain.ForgedKind(rawValue: kindName) else {
            let names = AppleIDDomain.ForgedKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlRequest.Failure(message: "unknown kind \"\(kindName)\" (expected one of: \(names))", field: "kind")
        }
        let userID = try body.string("user")
        guard let clientID = try body.optionalString("client_id") ?? domain.clients.first(of: domain.scenario)?.client.clientID else {
            throw ControlRequest.Failure(message: "missing required field (the scenario has no client to default to)", field: "client_id")
        }
        let defect = try body.optionalDefect()
        let overrides = try body.optionalObject("claims") ?? JSONObject()
        let nonce = try body.optionalString("nonce", maxBytes: AuthorizeRequest.maxStringBytes)
        var answer = JSONObject()
        switch kind {
        case .identityToken:
            if try body.optionalString("type") != nil {
                throw ControlRequest.Failure(message: "type is for kind notification only", field: "type")
            }
            answer["id_token"] = .string(try domain.forgeIdentityToken(userID: userID, clientID: clientID, nonce: nonce, overrides: overrides,
                                                                        defect: defect))
        case .notification:
            if nonce != nil { throw ControlRequest.Failure(message: "a notification has no nonce", field: "nonce") }
            let typeName = try body.optionalString("type", maxBytes: 64) ?? AccountEventType.consentRevoked.rawValue
            guard let type = AccountEventType(rawValue: typeName) else {
                let names = AccountEventType.allCases.map(\.rawValue).joined(separator: ", ")
                throw ControlRequest.Failure(message: "unknown event type \"\(typeName)\" (expected one of: \(names))", field: "type")
            }
            answer["payload"] = .string(try domain.forgeNotification(type: type, userID: userID, clientID: clientID, overrides: overrides,
                                                                     defect: defect))
        }
        answer["defect"] = defect.map { .string($0.rawValue) } ?? .null
        answer["check"] = defect.map { .string($0.check) } ?? .null
        return ControlResponse.json(.object(answer))
    }
}
