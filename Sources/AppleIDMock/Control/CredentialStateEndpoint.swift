import JOSE
import MiniHTTP

/// `GET /__mock/credential-state?user=ID_OR_SUB&client_id=ID` → `{"state": "authorized" |
/// "revoked" | "notFound" | "transferred"}`: what
/// `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)` answers on a device, so an
/// app's test double of the provider can ask the mock. An unknown user is `notFound`, as on a
/// device; an unknown client is a 404.
struct CredentialStateEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.credentialState)
        if let name = query.duplicatedNames.first { throw ControlRequest.Failure(message: "given more than once", field: name) }
        guard let user = query["user"], !user.isEmpty, user.utf8.count <= 256 else {
            throw ControlRequest.Failure(message: "missing required parameter (a user id or sub)", field: "user")
        }
        guard let clientID = query["client_id"], !clientID.isEmpty else { throw ControlRequest.Failure(message: "missing required parameter", field: "client_id") }
        let state: CredentialState
        do {
            state = try domain.credentialState(user: user, clientID: clientID)
        } catch {
            throw ControlNotFound(message: error.message, field: error.field)
        }
        return ControlResponse.json(.object(["state": .string(state.rawValue)]))
    }
}
