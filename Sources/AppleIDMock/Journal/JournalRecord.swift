import MiniHTTP

/// One exchange as the journal keeps it: the request with its parts clipped to their bounds
/// (nothing past them is kept, so the ring's memory has a ceiling), the answer's status and size,
/// and the handler's note. Turned into a `JournalEntry` only when read.
struct JournalRecord: Sendable {
    /// Body bytes kept of a request.
    static let bodyLimit = 4096
    /// Header bytes (names and values) kept of a request; later fields are dropped.
    static let headerLimit = 4096
    /// Request-target bytes kept.
    static let targetLimit = 4096

    /// Given by the journal as it keeps the record.
    var id: UInt64
    /// Real time when the exchange ended, seconds since 1970.
    let time: Double
    let peer: HTTPPeerAddress?
    let isTLS: Bool
    /// The request as kept; nil when none was read completely.
    let request: HTTPRequest?
    /// Whether the body went past `bodyLimit` (the kept part is its start).
    let bodyTruncated: Bool
    let status: HTTPStatus?
    let responseBytes: Int
    let microseconds: UInt64
    /// Why MiniHTTP answered or cut the exchange itself.
    let serverReason: HTTPExchange.Reason?
    let note: JournalNote?

    /// About how many bytes the record holds, for the ring's byte budget.
    let weight: Int

    init(id: UInt64, time: Double, exchange: HTTPExchange) {
        self.id = id
        self.time = time
        peer = exchange.peer
        isTLS = exchange.isTLS
        status = exchange.status
        responseBytes = exchange.responseBodyCount
        microseconds = exchange.microseconds
        serverReason = exchange.reason
        note = exchange.note as? JournalNote
        guard var request = exchange.request else {
            self.request = nil
            bodyTruncated = false
            weight = 256
            return
        }
        // Clipped only past a bound: the common request is kept as it came, sharing its storage.
        bodyTruncated = request.body.count > Self.bodyLimit
        if bodyTruncated { request.body = Array(request.body.prefix(Self.bodyLimit)) }
        if request.target.utf8.count > Self.targetLimit {
            request = HTTPRequest(method: request.method, target: String(decoding: request.target.utf8.prefix(Self.targetLimit), as: UTF8.self),
                                  minorVersion: request.minorVersion, headers: request.headers, body: request.body)
        }
        var headerBytes = 0
        for field in request.headers { headerBytes += field.name.utf8.count + field.value.utf8.count }
        if headerBytes > Self.headerLimit {
            var kept = HTTPHeaders()
            var used = 0
            for field in request.headers {
                used += field.name.utf8.count + field.value.utf8.count
                if used > Self.headerLimit { break }
                kept.add(field.name, field.value)
            }
            request.headers = kept
            headerBytes = used
        }
        request.pathParameters = [:]
        self.request = request
        weight = 256 + request.target.utf8.count + min(headerBytes, Self.headerLimit) + request.body.count
            + (note?.events.count ?? 0) * 8 + (note?.reason?.utf8.count ?? 0)
    }
}
