import AppleIDMock
import FoundationEssentials
import Glibc
import JOSE
import MiniHTTP

/// A running mock's control API as the CLI's commands reach it: `--server URL` (or
/// `APPLEID_MOCK_SERVER`, default `http://127.0.0.1:8080`) and `--timeout SECONDS`, over
/// MiniHTTP's one outbound client.
struct ControlClient {
    /// The options every control command takes.
    static let options: Set<String> = ["server", "timeout", "ca", "control-token"]
    /// Their usage lines.
    static let optionsUsage = """
      --server URL       the running mock (default http://127.0.0.1:8080)   APPLEID_MOCK_SERVER
      --timeout SECONDS  give up when connecting, or the answer, takes longer (default 30)
      --ca FILE          PEM CA certificates an https --server is checked against  APPLEID_MOCK_CA
                         (default: the system store)
      --control-token T  sent as "Authorization: Bearer T", for a mock    APPLEID_MOCK_CONTROL_TOKEN
                         started with --control-token
    """

    let server: String
    private let base: String
    private var http = HTTPClient()
    private var authorization: [(String, String)] = []

    /// The client for the parsed `--server` and `--timeout`.
    init(_ parsed: ParsedArguments, environment: [String: String], usage: String) throws {
        let server = parsed.options["server"] ?? environment["APPLEID_MOCK_SERVER"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", let host = url.host, !host.isEmpty,
              !server.contains("#"), !server.contains("?") else {
            throw UsageError(message: "--server expects an absolute http(s) URL, got \"\(server)\"", usage: usage)
        }
        let seconds = Double(try parsed.integer("timeout", default: 30, range: 1...3600, usage: usage))
        http.connectTimeout = seconds
        http.responseTimeout = seconds
        http.maxBodyBytes = 64 * 1024 * 1024
        if let ca = parsed.options["ca"] ?? environment["APPLEID_MOCK_CA"] {
            guard access(ca, R_OK) == 0 else { throw UsageError(message: "--ca \(ca): cannot read it", usage: usage) }
            http.caFile = ca
        }
        if let token = parsed.options["control-token"] ?? environment["APPLEID_MOCK_CONTROL_TOKEN"].flatMap({ $0.isEmpty ? nil : $0 }) {
            try Self.checkToken(token, usage: usage)
            authorization = [("Authorization", "Bearer " + token)]
        }
        self.server = server
        base = server.hasSuffix("/") ? String(server.dropLast()) : server
    }

    /// Fails with exit 2 unless `token` is a control token (`isToken`), for `serve` and the
    /// control commands alike.
    static func checkToken(_ token: String, usage: String) throws {
        guard isToken(token) else {
            throw UsageError(message: "--control-token expects 16 to 512 characters from A-Z a-z 0-9 - . _ ~ + / =, got \(token.utf8.count) characters",
                             usage: usage)
        }
    }

    /// A control token: 16 to 512 characters of RFC 6750's b64token alphabet, so it travels in
    /// a header unchanged and is long enough not to be guessed.
    static func isToken(_ token: String) -> Bool {
        (16...512).contains(token.utf8.count) && token.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || "-._~+/=".utf8.contains(byte)
        }
    }

    /// Sends a request to `path` under the server, with `body` as JSON when given; returns the
    /// status and the answer's text, or fails with exit 1 when the server cannot be reached.
    /// `waiting` is how long the server may hold the answer on purpose (a long poll's `wait`):
    /// it is added to `--timeout`.
    func send(_ method: String, _ path: String, body: JSONObject? = nil, waiting: Double = 0) throws -> (status: Int, text: String) {
        let bytes = body.map { JSONWriter.sortedCompact(.object($0)) } ?? []
        var http = http
        http.responseTimeout += waiting
        do {
            let response = try http.send(method, url: base + path, headers: (body == nil ? [] : [("Content-Type", "application/json")]) + authorization,
                                         body: bytes)
            return (response.status, String(decoding: response.body, as: UTF8.self))
        } catch {
            throw CommandFailure(message: "cannot reach \(server): \(error)", status: 1)
        }
    }

    /// `send`, failing with exit 1 unless the server answered 2xx.
    func call(_ method: String, _ path: String, body: JSONObject? = nil, waiting: Double = 0) throws -> String {
        let (status, text) = try send(method, path, body: body, waiting: waiting)
        guard (200..<300).contains(status) else { throw CommandFailure(message: "the mock answered \(status): \(text)", status: 1) }
        return text
    }
}
