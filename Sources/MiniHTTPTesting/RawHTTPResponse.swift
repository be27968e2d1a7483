import MiniHTTP

/// One response as read off the wire by `RawHTTPClient`.
public struct RawHTTPResponse: Sendable {
    /// Status code.
    public var status: Int
    /// Reason phrase.
    public var reason: String
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// Body bytes.
    public var body: [UInt8]
    /// Everything received for this response, head and body.
    public var raw: [UInt8]

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The whole response as text.
    public var rawText: String { String(decoding: raw, as: UTF8.self) }
}
