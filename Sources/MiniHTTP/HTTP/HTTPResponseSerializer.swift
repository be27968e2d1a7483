/// Turns a response into bytes on the wire (RFC 9112 §4–6).
public enum HTTPResponseSerializer {
    /// Serializes `response`. The server owns framing: any `Content-Length` or `Connection` the
    /// handler set is replaced. `headOnly` omits the body (HEAD) but keeps its length.
    public static func serialize(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool = false, minorVersion: Int = 1) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + response.headers.count * 40 + (headOnly ? 0 : response.body.count))
        out.append(contentsOf: "HTTP/1.\(minorVersion == 0 ? 0 : 1) \(response.status.code) \(response.status.reason)\r\n".utf8)
        for field in response.headers where !isFraming(field.name) {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        let code = response.status.code
        if !(100..<200).contains(code) && code != 204 && code != 304 {
            out.append(contentsOf: "Content-Length: \(response.body.count)\r\n".utf8)
        }
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if minorVersion == 0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if !headOnly { out.append(contentsOf: response.body) }
        return out
    }

    /// The interim response sent for `Expect: 100-continue`.
    public static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func isFraming(_ name: String) -> Bool {
        let lower = name.lowercasedASCII()
        return lower == "content-length" || lower == "connection" || lower == "transfer-encoding"
    }
}
