import AppleIDMock
import JOSE

/// `appleid-mock event TYPE --user U [--client ID]`: a user's action at Apple, on a running mock.
enum EventCommand {
    static let usage = """
    usage: appleid-mock event TYPE --user USER --client CLIENT_ID
           appleid-mock event password-changed --user USER
                              [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

      TYPE               consent-revoked, account-delete (or account-deleted),
                         email-disabled, email-enabled; or password-changed, which ends
                         the user's refresh tokens for every app and notifies none
      --user USER        a user id or sub
      --client ID        a client of the app group concerned (not for password-changed)

    \(ControlClient.optionsUsage)

    The state changes at once and each app group's notification is queued; prints
    {"notification": ID, "notifications": [IDs], "type", "user"}: the named app group's
    notification, and every one queued (an account deletion tells every app group the user
    signed in to). Await one with GET /__mock/notifications?after=ID-1&wait=S.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["user", "client"]), usage: usage)
        try parsed.requirePositionals(1, usage: usage)
        guard let type = parsed.positionals.first else { throw UsageError(message: "missing TYPE", usage: usage) }
        let passwordChange = type == "password-changed"
        guard passwordChange || AccountEventType(name: type) != nil else { throw UsageError(message: "unknown event type \"\(type)\"", usage: usage) }
        guard let user = parsed.options["user"] else { throw UsageError(message: "--user is required", usage: usage) }
        var body = JSONObject()
        body["type"] = .string(type)
        body["user"] = .string(user)
        if passwordChange {
            guard parsed.options["client"] == nil else {
                throw UsageError(message: "--client is not for password-changed: a password change ends the user's refresh tokens for every app", usage: usage)
            }
        } else {
            guard let client = parsed.options["client"] else { throw UsageError(message: "--client is required", usage: usage) }
            body["client_id"] = .string(client)
        }
        Output.out(try ControlClient(parsed, environment: environment, usage: usage).call("POST", "/__mock/events", body: body))
        return 0
    }
}
