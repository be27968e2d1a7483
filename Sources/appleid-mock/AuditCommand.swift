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
    usage: appleid-mock audit --server MOCK_URL --client-id ID --native URL [--user USER]
                              [--method POST] [--body TEMPLATE] [--accepted 2xx|CODE|HEADER|/REGEX/]
                              [--json] [--timeout SECONDS] [--ca FILE] [--control-token T]

      --native URL       where the backend takes an app's credential
      --client-id ID     the App ID the backend expects as the identityToken's audience
      --user USER        the scenario user who signs in (default: the scenario's first)
      --method M         the request's method (default POST)
      --body TEMPLATE    the request body; JSON when it starts with { or [, else a form, with
                         {{identity_token}}, {{authorization_code}} and {{user}} filled in
                         (default {"identityToken": …, "authorizationCode": …} as JSON)
      --accepted RULE    what counts as the backend accepting: a status class (2xx, the default),
                         a status (200), a header the answer carries (Set-Cookie), or /REGEX/ on
                         the body
      --json             the report as JSON instead of a table
    \(ControlClient.optionsUsage)

    Checks: a genuine sign-in is accepted; each defective identityToken is refused; the backend
    exchanged the authorization code at /auth/token with a valid client_secret; after a key
    rotation it fetches /auth/keys again and still accepts. Exit 1 when any check fails.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["native", "client-id", "user", "method", "body", "accepted"]),
                                         flags: ["json"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let clientID = parsed.options["client-id"], !clientID.isEmpty else { throw UsageError(message: "--client-id is required", usage: usage) }
        guard let native = parsed.options["native"] else { throw UsageError(message: "--native URL is required", usage: usage) }
        guard let url = URL(string: native), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false else {
            throw UsageError(message: "--native expects an absolute http(s) URL, got \"\(native)\"", usage: usage)
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
        var http = HTTPClient()
        let seconds = Double(try parsed.integer("timeout", default: 30, range: 1...3600, usage: usage))
        http.connectTimeout = seconds
        http.responseTimeout = seconds
        http.maxBodyBytes = 1024 * 1024
        if let ca = parsed.options["ca"] ?? environment["APPLEID_MOCK_CA"] { http.caFile = ca }
        let backend = AuditNativeBackend(url: native, method: method, template: parsed.options["body"], http: http)
        let audit = AuditRun(mock: mock, backend: backend, accepted: accepted, clientID: clientID, user: parsed.options["user"])
        let report = try audit.run()
        Output.out(parsed.flags.contains("json") ? report.json() : report.table())
        return report.failed ? 1 : 0
    }
}
