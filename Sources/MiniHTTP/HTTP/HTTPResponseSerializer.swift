/// Turns a response into bytes on the wire (RFC 9112 §4–6).
public enum HTTPResponseSerializer {
    /// Serializes `response`. The server owns framing: any `Content-Length` or `Connection` the
    /// handler set is replaced. `headOnly` omits the body (HEAD) but keeps its length.
    ///
    /// This is the one place responses become bytes, so it is where a response that cannot be
    /// framed is stopped: a status outside 200–599 (interim responses are the server's own), a
    /// reason phrase or header value with CR, LF, NUL or another control byte, a header name
    /// that is not a token, or a body on a 204 or 304. Such a response is a programming error;
    /// it is logged in one line and a plain 500 is sent in its place, never a corrupt stream
    /// (header injection; a body the framing does not allow).
    public static func serialize(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool = false, minorVersion: Int = 1) -> [UInt8] {
        serialized(response, keepAlive: keepAlive, headOnly: headOnly, minorVersion: minorVersion, log: HTTPServerLog.write).bytes
    }

    /// `serialize`, saying whether the 500 went out in the response's place (checked once).
    static func serialized(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool, minorVersion: Int,
                           log: (String) -> Void) -> (bytes: [UInt8], refused: Bool) {
        if let defect = defect(of: response) {
            log("refused a \(response.status.code) response: \(defect); sent 500 instead")
            return (write(.plainError(.internalServerError), keepAlive: keepAlive, headOnly: headOnly, minorVersion: minorVersion), true)
        }
        return (write(response, keepAlive: keepAlive, headOnly: headOnly, minorVersion: minorVersion), false)
    }

    /// The interim response sent for `Expect: 100-continue`.
    public static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func write(_ response: HTTPResponse, keepAlive: Bool, headOnly: Bool, minorVersion: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + response.headers.count * 40 + (headOnly ? 0 : response.body.count))
        out.append(contentsOf: "HTTP/1.\(minorVersion == 0 ? 0 : 1) \(response.status.code) \(response.status.reason)\r\n".utf8)
        for field in response.headers where !isFraming(field.name) {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !isBodiless(response.status.code) {
            out.append(contentsOf: "Content-Length: \(response.body.count)\r\n".utf8)
        }
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if minorVersion == 0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        if !headOnly && !isBodiless(response.status.code) { out.append(contentsOf: response.body) }
        return out
    }

    /// What makes `response` impossible to send as is, or nil when it can be sent.
    public static func defect(of response: HTTPResponse) -> String? {
        let code = response.status.code
        // RFC 9110 §15: a final status is 200–599; 1xx are interim and only the server sends them.
        guard (200...599).contains(code) else { return "status \(code) is not a final status" }
        // RFC 9112 §4: reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ).
        guard response.status.reason.utf8.allSatisfy(HTTPSyntax.isFieldValueByte) else { return "reason phrase has a control character" }
        for field in response.headers {
            // RFC 9110 §5.1: field-name = token; §5.5: CR, LF and NUL must never be sent in a value.
            guard HTTPSyntax.isToken(field.name.utf8) else {
                return "header name \(field.name.debugDescription) is not a token"
            }
            guard field.value.utf8.allSatisfy(HTTPSyntax.isFieldValueByte) else {
                return "value of header \(field.name) has CR, LF, NUL or another control character"
            }
        }
        // RFC 9110 §15.3.5, §15.4.5: a 204 or 304 ends at the blank line after its headers.
        if isBodiless(code) && !response.body.isEmpty {
            return "a \(code) response cannot carry a body (\(response.body.count) bytes given)"
        }
        return nil
    }

    /// Statuses whose responses end with their headers: no Content-Length, no body (RFC 9112 §6.3).
    private static func isBodiless(_ code: Int) -> Bool {
        (100..<200).contains(code) || code == 204 || code == 304
    }

    private static func isFraming(_ name: String) -> Bool {
        let lower = name.lowercasedASCII()
        return lower == "content-length" || lower == "connection" || lower == "transfer-encoding"
    }
}
