import MiniHTTP

/// `GET /appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js`: a Sign in with Apple JS
/// compatible with Apple's (`Endpoints/AppleJS/appleid.auth.js`, compiled in), at the path Apple's
/// CDN serves its own, so a page under test swaps only the host (docs/frontend-tests.md).
struct AppleJSEndpoint: Sendable {
    /// Apple's path for the script (`https://appleid.cdn-apple.com` + this).
    static let path = "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"

    /// The script. It changes only with the binary: `no-cache` has a browser ask again, never use
    /// a stale copy.
    func handle(_ request: HTTPRequest) -> HTTPResponse { Self.response }

    private static let response = HTTPResponse(status: .ok, headers: ["Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache",
                                                                      "X-Content-Type-Options": "nosniff"],
                                               body: PackageResources.appleid_auth_js)
}
