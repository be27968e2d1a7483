import JOSE
import MiniHTTP

/// Apple's response shapes (apple-reference.md §1.3, §2.1).
enum AppleResponse {
    /// `application/json;charset=UTF-8`, as Apple sends it.
    static let jsonContentType = "application/json;charset=UTF-8"

    /// A JSON document.
    static func json(_ body: [UInt8], status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": jsonContentType], body: body)
    }

    /// A JSON document that must not be cached (token endpoint answers, RFC 6749 §5.1).
    static func noStoreJSON(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: ["Content-Type": jsonContentType, "Cache-Control": "no-store", "Pragma": "no-cache"],
                     body: JSONWriter.compact(value))
    }
}
