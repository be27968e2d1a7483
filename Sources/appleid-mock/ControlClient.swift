import AppleIDMock
import JOSE

/// A running mock's control API as the CLI's commands reach it: `--server URL` (or
/// `APPLEID_MOCK_SERVER`, default `http://127.0.0.1:8080`) and `--timeout SECONDS`.
struct ControlClient {
    /// The options every control command takes.
    static let options: Set<String> = ["server", "timeout"]
    /// Their usage lines.
    static let optionsUsage = """
      --server URL       the running mock (default http://127.0.0.1:8080)   APPLEID_MOCK_SERVER
      --timeout SECONDS  give up when the whole exchange takes longer (default 30)
    """

    let server: String
    private let http: PlainHTTPClient
    private let basePath: String

    /// The client for the parsed `--server` and `--timeout`.
    init(_ parsed: ParsedArguments, environment: [String: String], usage: String) throws {
        let server = parsed.options["server"] ?? environment["APPLEID_MOCK_SERVER"] ?? "http://127.0.0.1:8080"
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        guard var http = PlainHTTPClient(url: base) else {
            throw UsageError(message: "--server expects an absolute http URL, got \"\(server)\"", usage: usage)
        }
        http.timeout = try parsed.integer("timeout", default: 30, range: 1...3600, usage: usage)
        self.server = server
        self.http = http
        basePath = String(base.dropFirst("http://".count).drop { $0 != "/" })
    }

    /// Sends a request to `path` under the server's base, with `body` as JSON when given;
    /// returns the answer's text, or fails with exit 1 (exit 2 when the server names bad input).
    func call(_ method: String, _ path: String, body: JSONObject? = nil) throws -> String {
        let bytes = body.map { JSONWriter.sortedCompact(.object($0)) } ?? []
        let status: Int, data: [UInt8]
        do {
            (status, data) = try http.request(method, path: basePath + path, contentType: body == nil ? nil : "application/json", body: bytes)
        } catch {
            throw CommandFailure(message: "cannot reach \(server): \(error.message)", status: 1)
        }
        let text = String(decoding: data, as: UTF8.self)
        guard (200..<300).contains(status) else {
            throw CommandFailure(message: "the mock answered \(status): \(text)", status: 1)
        }
        return text
    }
}
