import JOSE
import MiniHTTP

/// One request the mock received, as the request journal shows it (`GET /__mock/requests`,
/// `requests(matching:)`): who sent what, what the mock answered, why it refused, and which
/// events it caused. The `client_secret` appears only decoded, its signature dropped; the
/// `Authorization` and `Proxy-Authorization` headers' values are not shown.
public struct JournalEntry: Sendable {
    /// Numbered in the order exchanges ended, from 1; never reused (not even after a clear).
    public let id: UInt64
    /// Real time the exchange ended, seconds since 1970.
    public let time: Double
    /// The client's address; nil when unknown (an in-memory mock).
    let peer: HTTPPeerAddress?
    /// Whether it came over TLS.
    let isTLS: Bool
    /// Whether it went to the control API (`/__mock/…`).
    let isControl: Bool
    /// The method; nil when no complete request was read (MiniHTTP's own 400, 408, 431 …).
    public let method: HTTPMethod?
    /// The path as sent, still percent-encoded; nil as `method`.
    public let path: String?
    /// The route that took it (`/auth/token`, `/__mock/keys/{kid}`); nil when none did.
    package let route: String?
    /// The query's decoded fields (empty when there is no query or it is malformed).
    public let query: HTTPForm
    /// A form body's decoded fields, `client_secret` left out (see `clientSecret`); nil for other bodies.
    public let form: HTTPForm?
    /// Any other body as text (JSON of the control API), at most 4 KiB of it; nil when empty or a form.
    public let body: String?
    /// Whether the body went past the 4 KiB the journal keeps.
    public let bodyTruncated: Bool
    /// Request header fields as sent (the first 4 KiB), `Authorization`'s value replaced.
    public let headers: HTTPHeaders
    /// The `client_secret` the request carried, decoded.
    let clientSecret: DecodedSecret?
    /// The status answered; nil when the exchange was cut off unanswered.
    public let status: HTTPStatus?
    /// Apple's `error` code in the answer (`invalid_grant`), or the code Apple's error page stands for.
    package let error: String?
    /// Why the request was refused (the words of the log line, which Apple's answer never
    /// carries), or why MiniHTTP answered or ended it itself.
    package let reason: String?
    /// Sequence numbers of the events the request caused (`GET /__mock/events`).
    package let events: [UInt64]
    /// The injected fault that acted on the request, as `"<id> <action>"`; nil when none did.
    let fault: String?
    /// Microseconds from the request's first byte to its answer being queued.
    let microseconds: UInt64
    /// Body bytes answered.
    let responseBytes: Int

    /// A `client_secret` as its header and claims, the signature dropped; or why it is no JWS.
    enum DecodedSecret: Sendable, Equatable {
        /// The JOSE header and the claims.
        case decoded(header: JSONObject, claims: JSONObject)
        /// Not three base64url parts with JSON objects in the first two.
        case malformed(String)
    }

    /// The `client_id` sent: in the form, else the query, else a JSON body's top level.
    public let clientID: String?
    /// The form's `grant_type`.
    public let grantType: String?

    init(id: UInt64, _ record: JournalRecord) {
        self.id = id
        time = record.time
        peer = record.peer
        isTLS = record.isTLS
        status = record.status
        microseconds = record.microseconds
        responseBytes = record.responseBytes
        bodyTruncated = record.bodyTruncated
        error = record.note?.error
        reason = record.note?.reason ?? record.serverReason
        events = record.note?.events ?? []
        fault = record.note?.fault
        route = record.keys.route
        clientID = record.keys.clientID
        grantType = record.keys.grantType
        guard let request = record.request else {
            isControl = false
            method = nil
            path = nil
            query = HTTPForm()
            form = nil
            body = nil
            headers = HTTPHeaders()
            clientSecret = nil
            return
        }
        method = request.method
        path = request.path
        isControl = request.path.hasPrefix(ControlResponse.prefix)
        query = (try? request.queryParameters()) ?? HTTPForm()
        var headers = HTTPHeaders()
        for field in request.headers {
            // Credentials are not shown, for the origin (the control token) or a proxy alike.
            let name = field.name.lowercased()
            headers.add(field.name, name == "authorization" || name == "proxy-authorization" ? "[not shown]" : field.value)
        }
        self.headers = headers
        var secret = query["client_secret"]
        if request.mediaType == "application/x-www-form-urlencoded", let decoded = try? HTTPForm(decoding: request.body) {
            secret = decoded["client_secret"] ?? secret
            form = HTTPForm(decoded.pairs.filter { $0.name != "client_secret" })
            body = nil
        } else {
            form = nil
            body = request.body.isEmpty ? nil : String(decoding: request.body, as: UTF8.self)
        }
        clientSecret = secret.map(Self.decode)
    }

    /// `secret`'s header and claims, without verifying anything.
    static func decode(_ secret: String) -> DecodedSecret {
        let parts = secret.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .malformed("not a JWS: \(parts.count) part\(parts.count == 1 ? "" : "s") separated by dots, not 3") }
        guard let headerBytes = Base64URL.decode(parts[0]), case .object(let header)? = try? JSONParser.parse(headerBytes) else {
            return .malformed("its header is not a base64url-encoded JSON object")
        }
        guard let claimBytes = Base64URL.decode(parts[1]), case .object(let claims)? = try? JSONParser.parse(claimBytes) else {
            return .malformed("its claims are not a base64url-encoded JSON object")
        }
        return .decoded(header: header, claims: claims)
    }
}
