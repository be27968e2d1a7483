/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The three-digit code.
    public var code: Int
    /// The reason phrase sent on the status line.
    public var reason: String

    /// A status with an explicit reason phrase.
    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A status with the standard reason phrase for `code`.
    public init(_ code: Int) {
        self.init(code: code, reason: Self.reasons[code] ?? "Status \(code)")
    }

    /// `"404 Not Found"`.
    public var description: String { "\(code) \(reason)" }

    /// 200
    public static let ok = HTTPStatus(200)
    /// 302
    public static let found = HTTPStatus(302)
    /// 400
    public static let badRequest = HTTPStatus(400)
    /// 401
    public static let unauthorized = HTTPStatus(401)
    /// 404
    public static let notFound = HTTPStatus(404)
    /// 405
    public static let methodNotAllowed = HTTPStatus(405)
    /// 408
    public static let requestTimeout = HTTPStatus(408)
    /// 413
    public static let contentTooLarge = HTTPStatus(413)
    /// 415
    public static let unsupportedMediaType = HTTPStatus(415)
    /// 431
    public static let headerFieldsTooLarge = HTTPStatus(431)
    /// 500
    public static let internalServerError = HTTPStatus(500)
    /// 501
    public static let notImplemented = HTTPStatus(501)
    /// 503
    public static let serviceUnavailable = HTTPStatus(503)
    /// 505
    public static let versionNotSupported = HTTPStatus(505)

    private static let reasons: [Int: String] = [
        100: "Continue", 200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently",
        302: "Found", 303: "See Other", 304: "Not Modified", 307: "Temporary Redirect",
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
        413: "Content Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Content",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        505: "HTTP Version Not Supported",
    ]
}
