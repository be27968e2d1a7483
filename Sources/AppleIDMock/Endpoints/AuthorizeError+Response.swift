import JOSE
import MiniHTTP

extension AuthorizeError: HTTPResponseError {
    /// Apple's error page (apple-behaviour.md §2.2), or TN3107's JSON with `Cache-Control:
    /// no-store` and `Pragma: no-cache`, as the scenario's `authorize_error_format` says; a 503
    /// page when the mock is full.
    package var response: HTTPResponse {
        switch rendering {
        case .json(let status):
            var body = JSONObject()
            body["error"] = .string(jsonCode)
            return AppleResponse.noStoreJSON(.object(body), status: HTTPStatus(status))
        case .page(let status):
            return AuthorizePages.errorPage(self, status: HTTPStatus(status))
        case .unavailable:
            return AuthorizePages.errorPage(self, status: .serviceUnavailable)
        }
    }
}
