import AppleIDMock
import JOSE

/// `appleid-mock sign-in`: a native (iOS) sign-in against a running mock, printing what
/// `ASAuthorizationAppleIDCredential` would give the app.
enum SignInCommand {
    static let usage = """
    usage: appleid-mock sign-in --user USER --client BUNDLE_ID [--scopes "name email"] [--nonce NONCE]
                                [--hide-email | --share-email]
                                [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

      --user USER        scenario user id (e.g. alice)
      --client ID        the App ID (bundle id), e.g. com.example.app
      --scopes LIST      space-separated, from name and email (default "name email")
      --nonce NONCE      echoed into the identityToken
      --hide-email       choose Hide My Email; --share-email shares the real address
                         (default: the user's setting in the scenario)
    \(ControlClient.optionsUsage)

    Prints {"authorizationCode", "email", "fullName", "identityToken", "realUserStatus", "user"}.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["user", "client", "scopes", "nonce"]),
                                         flags: ["hide-email", "share-email"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let user = parsed.options["user"] else { throw UsageError(message: "--user is required", usage: usage) }
        guard let clientID = parsed.options["client"] else { throw UsageError(message: "--client is required", usage: usage) }
        if parsed.flags.contains("hide-email") && parsed.flags.contains("share-email") {
            throw UsageError(message: "--hide-email and --share-email exclude each other", usage: usage)
        }
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        var body: [(String, JSONValue)] = [
            ("user", .string(user)), ("client_id", .string(clientID)),
            ("scopes", .array((parsed.options["scopes"] ?? "name email").split(separator: " ").map { .string(String($0)) })),
        ]
        if let nonce = parsed.options["nonce"] { body.append(("nonce", .string(nonce))) }
        if parsed.flags.contains("hide-email") { body.append(("hide_email", .bool(true))) }
        if parsed.flags.contains("share-email") { body.append(("hide_email", .bool(false))) }
        let (status, text) = try client.send("POST", "/__mock/sign-in", body: JSONObject(body))
        guard status == 200 else {
            throw CommandFailure(message: "the mock answered \(status): \(text)", status: status == 400 ? 2 : 1)
        }
        Output.out(text)
        return 0
    }
}
