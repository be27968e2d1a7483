import AppleIDMock
import JOSE

/// `appleid-mock token`: a running mock forges an identity token (or a notification JWT),
/// genuine or with one defect, for a backend's own security tests. Prints the token alone, so
/// `TOKEN=$(appleid-mock token …)` works; `--json` prints the whole answer.
enum TokenCommand {
    static let usage = """
    usage: appleid-mock token --user USER [--client ID] [--defect NAME] [--nonce NONCE]
                              [--claims JSON] [--notification [--type EVENT]] [--json]
                              [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

      --user USER        scenario user id (e.g. alice)
      --client ID        the audience (default: the scenario's first client)
      --defect NAME      what the token gets wrong (default: nothing); one of:
    \(defectLines)
      --nonce NONCE      the nonce the token carries (nonce-mismatch carries another)
      --claims JSON      a JSON object set over the token's claims; null removes a claim
      --notification     a server-to-server notification JWT instead of an identity token
      --type EVENT       its event: consent-revoked (default), account-delete, email-disabled, email-enabled
      --json             print {"id_token"|"payload", "defect", "check"} instead of the token alone
    \(ControlClient.optionsUsage)
    """

    private static var defectLines: String {
        let width = TokenDefect.names.map(\.count).max() ?? 0
        return TokenDefect.allCases.map { defect in
            "                     " + defect.rawValue + String(repeating: " ", count: width - defect.rawValue.count) + "  check: " + defect.check
        }.joined(separator: "\n")
    }

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["user", "client", "defect", "nonce", "claims", "type"]),
                                         flags: ["notification", "json"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let user = parsed.options["user"] else { throw UsageError(message: "--user is required", usage: usage) }
        var body: [(String, JSONValue)] = [("user", .string(user))]
        if let client = parsed.options["client"] { body.append(("client_id", .string(client))) }
        if let name = parsed.options["defect"] {
            guard TokenDefect(rawValue: name) != nil else {
                throw UsageError(message: "--defect: unknown defect \"\(name)\" (expected one of: \(TokenDefect.names.joined(separator: ", ")))",
                                 usage: usage)
            }
            body.append(("defect", .string(name)))
        }
        if let nonce = parsed.options["nonce"] { body.append(("nonce", .string(nonce))) }
        if let text = parsed.options["claims"] {
            guard case .object(let claims)? = try? JSONParser.parse(Array(text.utf8)) else {
                throw UsageError(message: "--claims: expected a JSON object, e.g. '{\"email\": \"mallory@example.com\"}'", usage: usage)
            }
            body.append(("claims", .object(claims)))
        }
        let notification = parsed.flags.contains("notification")
        if notification { body.append(("kind", "notification")) }
        if let type = parsed.options["type"] {
            guard notification else { throw UsageError(message: "--type needs --notification", usage: usage) }
            body.append(("type", .string(type)))
        }
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        let (status, text) = try client.send("POST", "/__mock/tokens", body: JSONObject(body))
        guard status == 200 else {
            throw CommandFailure(message: "the mock answered \(status): \(text)", status: status == 400 ? 2 : 1)
        }
        if parsed.flags.contains("json") {
            Output.out(text)
        } else {
            let answer = (try? JSONParser.parse(Array(text.utf8)))?.objectValue
            guard let token = answer?[notification ? "payload" : "id_token"]?.stringValue else {
                throw CommandFailure(message: "the mock's answer has no token: \(text)", status: 1)
            }
            Output.out(token)
        }
        return 0
    }
}
