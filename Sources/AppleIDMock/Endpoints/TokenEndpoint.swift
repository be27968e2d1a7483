import JOSE
import MiniHTTP

/// `POST /auth/token` (apple-reference.md §1.3): code exchange, refresh, client credentials.
struct TokenEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        AppleResponse.noStoreJSON(.object(try domain.token(try AppleForm.fields(request, domain.scenario.compatibility))))
    }
}
