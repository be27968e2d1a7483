import AppleIDMock
import FoundationEssentials
import JOSE
import MiniHTTP

/// `appleid-mock audit`: the mock plays Apple and the attacker against a running backend, and
/// reports what the backend wrongly accepts. Each check signs a user in at the mock, hands the
/// backend the credential (genuine, or with one defect), judges its answer, and reads the mock's
/// request journal for what the backend itself asked Apple. Exit 0 when every check passes, 1
/// when any fails, 2 for bad input. Nothing goes anywhere but the backend URL and the mock.
enum AuditCommand {
    static let usage = """
    usage: appleid-mock audit [--server MOCK_URL] --client-id ID (--native URL | --web LOGIN_URL)
                              [--user USER] [--method POST] [--body TEMPLATE]
                              [--accepted 2xx|CODE|HEADER|/REGEX/] [--json]
                              [--timeout SECONDS] [--ca FILE] [--control-token T]

      --native URL       where the backend takes an app's credential (an iOS app's backend)
      --web LOGIN_URL    where a browser starts signing in (a web backend): it must lead, by a
                         redirect or a link in the page, to the mock's /auth/authorize
      --client-id ID     the backend's App ID (native) or Services ID (web)
      --user USER        the scenario user who signs in (default: the scenario's first)
      --method M         native: the request's method (default POST)
      --body TEMPLATE    native: the request body; JSON when it starts with { or [, else a form,
                         with {{identity_token}}, {{authorization_code}} and {{user}} filled in
                         (default {"identityToken": …, "authorizationCode": …} as JSON)
      --accepted RULE    what counts as the backend accepting: a status class (2xx, the default),
                         a status (200), a header the answer carries (Set-Cookie), or /REGEX/ on
                         the body
      --json             the report as JSON instead of a table
    \(ControlClient.optionsUsage)

    Checks, in order: a genuine sign-in is accepted; the backend exchanged its code at /auth/token
    with a valid client_secret and redirect_uri (the mock's request journal says); after a key
    rotation (the old key retired) it fetches /auth/keys again and accepts; each defective id_token
    is refused (\(TokenDefect.names.joined(separator: ", ")); nonce-mismatch only where the backend
    sends a nonce); with /auth/token answering 503, and /auth/keys broken JSON after a rotation,
    nobody is accepted; once Apple is back a genuine sign-in is. A web backend gets each sign-in
    at its callback as Apple delivers it (form_post or query), with the cookies its login set.
    The audit changes the mock (keys rotated, users signed in); the faults it installs it removes.
    Nothing is sent anywhere but the backend's origin and the mock. Exit 1 when any check fails.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["native", "web", "client-id", "user", "method", "body", "accepted"]),
                                         flags: ["json"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let clientID = parsed.options["client-id"], !clientID.isEmpty else { throw UsageError(message: "--client-id is required", usage: usage) }
        let native = parsed.options["native"]
        let web = parsed.options["web"]
        guard (native == nil) != (web == nil) else {
            throw UsageError(message: native == nil ? "--native URL or --web LOGIN_URL is required" : "--native and --web exclude each other", usage: usage)
        }
        let flag = native != nil ? "--native" : "--web"
        guard let address = native ?? web, AuditOrigin(address) != nil else {
            throw UsageError(message: "\(flag) expects an absolute http(s) URL, got \"\(native ?? web ?? "")\"", usage: usage)
        }
        if web != nil {
            for option in ["method", "body"] where parsed.options[option] != nil {
                throw UsageError(message: "--\(option) is for --native; a web backend gets what Apple sends its callback", usage: usage)
            }
        }
        let method = parsed.options["method"] ?? "POST"
        guard !method.isEmpty, method.utf8.allSatisfy({ (65...90).contains($0) }) else {
            throw UsageError(message: "--method expects an upper-case method such as POST, got \"\(method)\"", usage: usage)
        }
        if let template = parsed.options["body"], !AuditNativeBackend.placeholders.contains(where: template.contains) {
            throw UsageError(message: "--body has no placeholder: use {{identity_token}}, {{authorization_code}} or {{user}}", usage: usage)
        }
        let acceptedText = parsed.options["accepted"] ?? "2xx"
        guard let accepted = AuditAcceptance(acceptedText) else {
            throw UsageError(message: "--accepted expects a status class (2xx), a status (200), a header name or /REGEX/, got \"\(acceptedText)\"",
                             usage: usage)
        }
        let mock = try ControlClient(parsed, environment: environment, usage: usage)
        if web != nil, AuditOrigin(mock.server) == nil {
            throw UsageError(message: "--server expects an absolute http(s) URL", usage: usage)
        }
        var http = HTTPClient()
        let seconds = Double(try parsed.integer("timeout", default: 30, range: 1...3600, usage: usage))
        http.connectTimeout = seconds
        http.responseTimeout = seconds
        http.maxBodyBytes = 1024 * 1024
        if let ca = parsed.options["ca"] ?? environment["APPLEID_MOCK_CA"] { http.caFile = ca }
        let user = try parsed.options["user"] ?? firstUser(mock)
        let target: any AuditTarget
        if let native {
            target = AuditNativeBackend(url: native, method: method, template: parsed.options["body"], http: http, mock: mock, clientID: clientID, user: user)
        } else {
            target = try AuditWebBackend(loginURL: address, http: http, mock: mock, user: user)
        }
        let report = try AuditRun(mock: mock, target: target, accepted: accepted).run()
        Output.out(parsed.flags.contains("json") ? report.json() : report.table())
        return report.failed ? 1 : 0
    }

    /// The scenario's first user.
    private static func firstUser(_ mock: ControlClient) throws -> String {
        let text = try mock.call("GET", "/__mock/users")
        guard case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)),
              let first = answer["users"]?.arrayValue?.first?.objectValue?["id"]?.stringValue else {
            throw CommandFailure(message: "the mock has no user to sign in (pass --user)", status: 1)
        }
        return first
    }
}
