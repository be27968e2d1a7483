import MiniHTTP

extension OAuthError: HTTPResponseError {
    /// Apple's 400 with `Cache-Control: no-store` (apple-behaviour.md §2.1).
    package var response: HTTPResponse { AppleResponse.noStoreJSON(json, status: .badRequest) }
}
