import JOSE
import MiniHTTP

/// Apple's response shapes (apple-behaviour.md §1.3, §2.1).
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

    /// `handler` with `Server: Apple` first on every answer, as on every answer observed from
    /// Apple (§2.1 [O]), refusals included; a fault that names its own `Server` keeps it.
    static func servedByApple(_ handler: HTTPHandler) -> HTTPHandler {
        switch handler {
        case .immediate(let body):
            return .immediate { request in
                do {
                    return signed(try body(request))
                } catch let known as any HTTPResponseError {
                    return signed(known.response)
                }
            }
        case .deferred(let body):
            return .deferred { request in
                do {
                    return signed(try await body(request))
                } catch let known as any HTTPResponseError {
                    return signed(known.response)
                }
            }
        }
    }

    /// `response` with `Server: Apple` as its first field, unless it names a server already.
    private static func signed(_ response: HTTPResponse) -> HTTPResponse {
        guard response.headers["Server"] == nil else { return response }
        var response = response
        var headers: HTTPHeaders = ["Server": "Apple"]
        for field in response.headers.fields { headers.add(field.name, field.value) }
        response.headers = headers
        return response
    }
}
