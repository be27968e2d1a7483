import JOSE
import MiniHTTP

/// `POST /auth/token` (apple-behaviour.md §1.3): code exchange, refresh, client credentials.
struct TokenEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = try AppleForm.fields(request, domain.scenario.compatibility)
        let tokenRequest = TokenRequest(clientID: form["client_id"], clientSecret: form["client_secret"], grantType: form["grant_type"],
                                        code: form["code"], redirectURI: form["redirect_uri"], codeVerifier: form["code_verifier"],
                                        refreshToken: form["refresh_token"], scope: form["scope"])
        do {
            return AppleResponse.noStoreJSON(.object(Self.json(try domain.token(tokenRequest))))
        } catch {
            switch error {
            case .refused(let refusal): throw refusal
            // The mock's own fault: the route table logs it and answers 500.
            case .signing(let reason): throw TokenSigningFailed(reason: reason)
            }
        }
    }

    /// Apple's token JSON, keys in Apple's order.
    static func json(_ answer: TokenAnswer) -> JSONObject {
        var object = JSONObject()
        object["access_token"] = .string(answer.accessToken)
        object["token_type"] = "Bearer"
        object["expires_in"] = .int(Int64(answer.expiresIn))
        switch answer.refreshToken {
        case .omitted: break
        case .none: object["refresh_token"] = .null
        case .issued(let token): object["refresh_token"] = .string(token)
        }
        if let idToken = answer.idToken { object["id_token"] = .string(idToken) }
        return object
    }
}

/// The mock could not sign an id_token (no key, or OpenSSL failed): its own fault, not Apple's
/// answer to the request.
struct TokenSigningFailed: Error, CustomStringConvertible {
    let reason: String
    var description: String { "signing the id_token failed: \(reason)" }
}
