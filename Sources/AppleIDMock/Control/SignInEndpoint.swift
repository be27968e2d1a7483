import JOSE
import MiniHTTP

/// `POST /__mock/sign-in`: a native (iOS) Sign in with Apple without a device. Body
/// `{user, client_id, scopes, nonce, hide_email}`; answers what `ASAuthorizationAppleIDCredential`
/// gives the app: `user`, `identityToken`, `authorizationCode`, `email`, `fullName`, `realUserStatus`.
struct SignInEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.nativeSignIn)
        let credential: AppleIDDomain.NativeCredential = try domain.nativeSignIn(userID: try body.string("user"), clientID: try body.string("client_id"),
                                             scopes: try body.optionalStrings("scopes") ?? ["name", "email"],
                                             nonce: try body.optionalString("nonce"), hideEmail: try body.optionalBool("hide_email"),
                                             defect: try body.optionalDefect())
        return ControlResponse.json(.object(Self.json(credential)))
    }

    /// The credential as JSON, with `ASAuthorizationAppleIDCredential`'s property names.
    static func json(_ credential: AppleIDDomain.NativeCredential) -> JSONObject {
        var answer = JSONObject()
        answer["user"] = .string(credential.user)
        answer["identityToken"] = .string(credential.identityToken)
        answer["authorizationCode"] = .string(credential.authorizationCode)
        answer["email"] = credential.email.map(JSONValue.string) ?? .null
        if let name = credential.fullName {
            var fullName = JSONObject()
            fullName["givenName"] = .string(name.givenName)
            fullName["familyName"] = .string(name.familyName)
            answer["fullName"] = .object(fullName)
        } else {
            answer["fullName"] = .null
        }
        answer["realUserStatus"] = .int(Int64(credential.realUserStatus))
        return answer
    }
}
