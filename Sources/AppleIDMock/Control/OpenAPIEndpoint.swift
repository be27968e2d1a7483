import MiniHTTP

/// `GET /__mock/openapi.json`: the OpenAPI 3.1 contract of every route, Apple's as the mock
/// implements them and the control API's. The document is the committed
/// `Contract/openapi.json`, compiled into the binary by SwiftPM (`embedInCode`), so a release
/// binary or a container image serves it with no file beside it; it is served byte for byte.
struct OpenAPIEndpoint: Sendable {
    /// The committed document's bytes.
    static let document: [UInt8] = PackageResources.openapi_json

    /// The document, `application/json`.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: Self.document)
    }
}
