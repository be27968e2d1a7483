import FoundationEssentials
import JOSE
import MiniHTTP

/// A web backend `appleid-mock audit --web LOGIN_URL` attacks, as a browser would meet it: its
/// login URL leads (by a redirect, or a link in the page) to the mock's `/auth/authorize`; the
/// mock signs the user in (`POST /__mock/authorize`, its `defect` spoiling the id_token delivered
/// and the one the code is exchanged for); the result goes to the backend's callback as Apple
/// sends it (a form_post, or a query). The backend's cookies and `state` are kept from its login
/// to its callback. Nothing is sent to a host other than the backend's origin and the mock.
final class AuditWebBackend: AuditTarget {
    let loginURL: String
    var http: HTTPClient
    let mock: ControlClient
    let user: String
    private let backend: AuditOrigin
    private let apple: AuditOrigin
    /// Whether the backend's authorize requests carry a nonce (seen at the first attempt).
    private var sentNonce = false

    /// Redirects followed within the backend before its link to the mock.
    static let maxRedirects = 5

    init(loginURL: String, http: HTTPClient, mock: ControlClient, user: String) throws {
        guard let backend = AuditOrigin(loginURL) else { throw CommandFailure(message: "--web expects an absolute http(s) URL", status: 2) }
        guard let apple = AuditOrigin(mock.server) else { throw CommandFailure(message: "--server expects an absolute http(s) URL", status: 2) }
        self.loginURL = loginURL
        self.http = http
        self.mock = mock
        self.user = user
        self.backend = backend
        self.apple = apple
    }

    var description: String { loginURL }

    func applies(_ defect: String) -> Bool { defect != "nonce-mismatch" || sentNonce }

    func attempt(defect: String?) throws -> AuditAttempt {
        var cookies: [(String, String)] = []
        // 1. The login URL, within the backend, to its link to Apple.
        var url = loginURL
        var authorize: String?
        for _ in 0...Self.maxRedirects {
            let answer: HTTPClient.Response
            do {
                answer = try http.send("GET", url: url, headers: Self.cookieHeader(cookies))
            } catch {
                return AuditAttempt(result: .failure(error), code: "", undelivered: nil)
            }
            Self.keep(answer, in: &cookies)
            if (300..<400).contains(answer.status), let location = answer.headers["Location"] {
                let next = Self.resolve(location, against: url)
                if AuditOrigin(next) == backend {
                    url = next
                    continue
                }
                authorize = next
            } else {
                authorize = Self.authorizeLink(in: String(decoding: answer.body, as: UTF8.self), apple: apple)
            }
            break
        }
        guard let authorize else {
            return AuditAttempt(result: nil, code: "", undelivered: "the login URL led to no link to \(apple)/auth/authorize")
        }
        guard AuditOrigin(authorize) == apple, let parsed = URL(string: authorize), parsed.path == "/auth/authorize" else {
            throw CommandFailure(message: "the backend's login leads to \(authorize), not to the mock's /auth/authorize at \(apple) (--server)", status: 2)
        }
        // 2. Apple: the user signs in; the mock answers what Apple would deliver.
        var body = JSONObject()
        for (name, value) in Self.queryPairs(parsed.query ?? "") where Self.authorizeFields.contains(name) { body[name] = .string(value) }
        if body["nonce"] != nil { sentNonce = true }
        body["user"] = .string(user)
        if let defect { body["defect"] = .string(defect) }
        let (status, text) = try mock.send("POST", "/__mock/authorize", body: body)
        guard status == 200, case .object(let delivery)? = try? JSONParser.parse(Array(text.utf8)),
              let callback = delivery["url"]?.stringValue, let method = delivery["method"]?.stringValue else {
            return AuditAttempt(result: nil, code: "", undelivered: "Apple refuses the backend's authorize request: \(text)")
        }
        let form = delivery["form"]?.objectValue ?? JSONObject()
        let code = form["code"]?.stringValue ?? URL(string: callback).flatMap { url in Self.queryPairs(url.query ?? "").first { $0.0 == "code" }?.1 } ?? ""
        // 3. The callback, on the backend's origin only.
        if callback.contains("#") {
            return AuditAttempt(result: nil, code: code, undelivered: "response_mode fragment reaches the page's script, not the server: use form_post")
        }
        guard AuditOrigin(callback) == backend else {
            return AuditAttempt(result: nil, code: code,
                                undelivered: "the callback \(callback) is not on the backend's origin \(backend); the audit sends nothing elsewhere")
        }
        var headers = Self.cookieHeader(cookies)
        var bytes: [UInt8] = []
        if method == "POST" {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            headers.append(("Origin", "\(apple.scheme)://\(apple.host)" + (apple.port == (apple.scheme == "https" ? 443 : 80) ? "" : ":\(apple.port)")))
            bytes = Array(HTTPForm.encode(form.map { ($0.key, $0.value.stringValue ?? "") }).utf8)
        }
        do {
            return AuditAttempt(result: .success(try http.send(method, url: callback, headers: headers, body: bytes)), code: code)
        } catch {
            return AuditAttempt(result: .failure(error), code: code)
        }
    }

    /// The authorize parameters `POST /__mock/authorize` takes.
    static let authorizeFields = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                  "code_challenge", "code_challenge_method"]

    /// The first link in `page` to `apple`'s `/auth/authorize` (HTML's escapes undone).
    static func authorizeLink(in page: String, apple: AuditOrigin) -> String? {
        let text = page.replacing("&amp;", with: "&").replacing("&#x3D;", with: "=").replacing("&#61;", with: "=").replacing("&quot;", with: "\"")
        for prefix in Self.prefixes(apple) {
            guard let start = text.firstRange(of: prefix + "/auth/authorize") else { continue }
            let end = text[start.lowerBound...].firstIndex { "\"'<> \n\r\t".contains($0) } ?? text.endIndex
            return String(text[start.lowerBound..<end])
        }
        return nil
    }

    private static func prefixes(_ origin: AuditOrigin) -> [String] {
        let base = "\(origin.scheme)://\(origin.host)"
        let standard = origin.port == (origin.scheme == "https" ? 443 : 80)
        return standard ? [base, base + ":\(origin.port)"] : [base + ":\(origin.port)"]
    }

    /// `location` made absolute against `base`.
    static func resolve(_ location: String, against base: String) -> String {
        if location.hasPrefix("http://") || location.hasPrefix("https://") { return location }
        guard let origin = AuditOrigin(base) else { return location }
        let root = "\(origin.scheme)://\(origin.host):\(origin.port)"
        if location.hasPrefix("/") { return root + location }
        let path = URL(string: base)?.path ?? "/"
        let directory = path.hasSuffix("/") ? path : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
        return root + (directory.hasPrefix("/") ? directory : "/" + directory) + location
    }

    /// A query's name/value pairs, percent-decoded (`+` is a space).
    static func queryPairs(_ query: String) -> [(String, String)] {
        query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? { HTTPForm.percentDecode(String(part).replacing("+", with: " ")) }
            guard let name = parts.first.flatMap(decode) else { return nil }
            return (name, parts.count > 1 ? decode(parts[1]) ?? "" : "")
        }
    }

    /// Keeps the cookies `answer` sets (name and value; attributes are not kept).
    static func keep(_ answer: HTTPClient.Response, in cookies: inout [(String, String)]) {
        for field in answer.headers.fields where field.name.lowercased() == "set-cookie" {
            let pair = field.value.split(separator: ";", maxSplits: 1).first ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.map({ String($0.drop { $0 == " " }) }), !name.isEmpty else { continue }
            cookies.removeAll { $0.0 == name }
            cookies.append((name, parts.count > 1 ? String(parts[1]) : ""))
        }
    }

    /// The `Cookie` header for `cookies`, when there are any.
    static func cookieHeader(_ cookies: [(String, String)]) -> [(String, String)] {
        cookies.isEmpty ? [] : [("Cookie", cookies.map { "\($0.0)=\($0.1)" }.joined(separator: "; "))]
    }
}
