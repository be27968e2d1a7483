import AppleIDMock
import JOSE
import MiniHTTP

/// `appleid-mock requests [--follow] [filters]`: a running mock's request journal (`GET
/// /__mock/requests`), one JSON object a line as the mock sends it, oldest first; with
/// `--follow`, each new request as it lands. `--count` prints how many match instead.
enum RequestsCommand {
    /// The command's help.
    static let usage = """
    usage: appleid-mock requests [--follow | --count] [--method M] [--path P] [--client-id ID]
                                 [--grant-type G] [--status CODE] [--control true|false] [--after ID]
                                 [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token TOKEN]

    Prints the requests a running mock received (GET /__mock/requests), oldest first, one JSON
    object a line as the mock sends it: time, peer, method, path, query and form fields, the
    client_secret decoded (its signature dropped), status, Apple's error code, why it was
    refused, and the events it caused.

      --follow           then keep printing requests as they land (long-polls with wait=\(ControlFeed.followWait))
                         until SIGINT or SIGTERM or its output closes (exit 0), or until the
                         mock goes away (exit 1)
      --count            print only how many match (GET /__mock/requests/count)
      --method M         only this method (GET, POST …)
      --path P           only this path (/auth/token), or route template (/__mock/keys/{kid})
      --client-id ID     only requests carrying this client_id
      --grant-type G     only token requests of this grant_type (authorization_code, refresh_token …)
      --status CODE      only this status (400), or class (4xx)
      --control BOOL     only control API requests (true), or only the others (false)
      --after ID         only requests after id ID (default 0: all the mock keeps)
    \(ControlClient.optionsUsage)

    The mock keeps its newest 10,000 requests (unless started with --journal off: then it
    answers 409 and this exits 1); when some after ID are gone, a line on stderr says how many
    were missed.
    """

    /// Filter options and the query parameters they become.
    static let filters: [(option: String, parameter: String)] = [
        ("method", "method"), ("path", "path"), ("client-id", "client_id"), ("grant-type", "grant_type"),
        ("status", "status"), ("control", "control"),
    ]

    /// Runs `requests …`.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(filters.map(\.option) + ["after"]),
                                         flags: ["follow", "count"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        if parsed.flags.contains("follow") && parsed.flags.contains("count") {
            throw UsageError(message: "--follow and --count do not go together", usage: usage)
        }
        var pairs: [(String, String)] = []
        for (option, parameter) in filters {
            guard let value = parsed.options[option] else { continue }
            // Refused here as the mock would refuse it: exit 2 with the usage, not a 400 later.
            if let problem = RequestFilter.problem(parameter, value) {
                throw UsageError(message: "--\(option) expects \(problem), got \"\(value)\"", usage: usage)
            }
            pairs.append((parameter, value))
        }
        let after = try parsed.unsigned("after", usage: usage) ?? 0
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        if parsed.flags.contains("count") {
            let text = try client.call("GET", "/__mock/requests/count?" + HTTPForm.encode(pairs + [("after", "\(after)")]))
            guard case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), case .int(let count)? = answer["count"] else {
                throw CommandFailure(message: "\(client.server) answered something other than a count: \(LogText.clip(text))", status: 1)
            }
            Output.out("\(count)")
            return 0
        }
        let filter = pairs.isEmpty ? "" : "&" + HTTPForm.encode(pairs)
        let feed = ControlFeed(client: client, path: "/__mock/requests", filter: filter, items: "requests", noun: ("request", "requests"))
        return try feed.run(after: after, follow: parsed.flags.contains("follow"))
    }
}
