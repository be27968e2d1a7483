import AppleIDMock
import FoundationEssentials
import JOSE
import MiniHTTP

/// One side's answer to a probe, as received or as recorded: what the comparison reads.
///
/// A recording is a directory with one file per probe, `<probe id>.json`:
/// `{"probe", "recorded_from", "request": {"method", "path"}, "status", "headers": [[name, value], …],
/// "body"}` (`body_base64url` instead of `body` when the body is not UTF-8). `Set-Cookie` is not
/// recorded: it is volatile, and a recording holds no cookie.
struct ConformanceAnswer: Sendable {
    /// The address the probe went to (`https://appleid.apple.com`): URLs under it are compared
    /// relative to it.
    var origin: String
    /// The status code.
    var status: Int
    /// The header fields, in order.
    var headers: [(name: String, value: String)]
    /// The body.
    var body: [UInt8]

    /// The first value of header `name`, any case.
    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The body as text (invalid UTF-8 repaired).
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The answer `response` from `origin`.
    init(origin: String, response: HTTPClient.Response) {
        self.origin = origin
        status = response.status
        headers = response.headers.fields.map { ($0.name, $0.value) }
        body = response.body
    }

    /// An answer from its parts.
    init(origin: String, status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.origin = origin
        self.status = status
        self.headers = headers
        self.body = body
    }

    // MARK: - Recording

    /// The recording file of `probe`.
    func recording(of probe: ConformanceProbe) -> String {
        var object = JSONObject()
        object["probe"] = .string(probe.id)
        object["recorded_from"] = .string(origin)
        object["request"] = .object(["method": .string(probe.method), "path": .string(probe.path)])
        object["status"] = .int(Int64(status))
        object["headers"] = .array(headers.filter { $0.name.lowercased() != "set-cookie" }.map { .array([.string($0.name), .string($0.value)]) })
        if let text = String(validating: body, as: UTF8.self) {
            object["body"] = .string(text)
        } else {
            object["body_base64url"] = .string(Base64URL.encode(body))
        }
        return JSONWriter.pretty(.object(object))
    }

    /// Why a recording file cannot be read.
    struct RecordingError: Error, CustomStringConvertible {
        /// The file and what is wrong.
        let description: String
    }

    /// Reads `probe`'s file from the recording `directory`.
    static func read(_ probe: ConformanceProbe, from directory: String) throws(RecordingError) -> ConformanceAnswer {
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + probe.id + ".json"
        let text: String
        do {
            text = try BoundedFile.text(path, limit: 4 * 1024 * 1024)
        } catch {
            throw RecordingError(description: "\(path): \(error.message) (a recording has one file per probe: see --list)")
        }
        guard case .object(let object)? = try? JSONParser.parse(text) else { throw RecordingError(description: "\(path): not a JSON object") }
        func fail(_ message: String) -> RecordingError { RecordingError(description: "\(path): \(message)") }
        guard let origin = object["recorded_from"]?.stringValue else { throw fail("expected \"recorded_from\", the URL it was recorded from") }
        guard let status = object["status"]?.intValue, (100...599).contains(status) else { throw fail("expected \"status\", 100 to 599") }
        var headers: [(name: String, value: String)] = []
        for field in object["headers"]?.arrayValue ?? [] {
            guard let pair = field.arrayValue, pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                throw fail("expected \"headers\" as [[name, value], …]")
            }
            headers.append((name, value))
        }
        let body: [UInt8]
        if let text = object["body"]?.stringValue {
            body = Array(text.utf8)
        } else if let encoded = object["body_base64url"]?.stringValue {
            guard let bytes = Base64URL.decode(encoded) else { throw fail("\"body_base64url\" is not base64url") }
            body = bytes
        } else {
            throw fail("expected \"body\" (text) or \"body_base64url\"")
        }
        return ConformanceAnswer(origin: origin, status: Int(status), headers: headers, body: body)
    }
}
