import AppleIDMock

/// `appleid-mock events [--follow]`: a running mock's event feed (`GET /__mock/events`), one
/// JSON object a line as the mock sends it, oldest first; with `--follow`, each new event as it
/// lands, until a stop signal (exit 0) or the mock goes away (exit 1).
enum EventsCommand {
    /// The command's help.
    static let usage = """
    usage: appleid-mock events [--follow] [--type NAMES] [--after SEQ]
                               [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token TOKEN]

    Prints the mock's record of what happened (GET /__mock/events), oldest first, one JSON object
    a line as the mock sends it: sequence, mock time ("time", "at"), type and the event's fields.

      --follow           then keep printing events as they land (long-polls with wait=\(ControlFeed.followWait))
                         until SIGINT or SIGTERM or its output closes (exit 0), or until the
                         mock goes away (exit 1)
      --type NAMES       only these types, comma-separated:
    \(wrapped(DomainEvent.names, indent: 21))
      --after SEQ        only events after sequence number SEQ (default 0: all the mock keeps)
    \(ControlClient.optionsUsage)

    The mock keeps its newest events only; when some after SEQ are gone, a line on stderr says
    how many were missed.
    """

    /// Runs `events …`.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["type", "after"]), flags: ["follow"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        var filter = ""
        if let types = parsed.options["type"] {
            let names = types.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy(DomainEvent.names.contains) else {
                throw UsageError(message: "--type expects event types separated by commas, among \(DomainEvent.names.joined(separator: ", ")); got \"\(types)\"",
                                 usage: usage)
            }
            filter = "&type=" + names.joined(separator: ",")
        }
        let after = try parsed.unsigned("after", usage: usage) ?? 0
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        let feed = ControlFeed(client: client, path: "/__mock/events", filter: filter, items: "events", noun: ("event", "events"))
        return try feed.run(after: after, follow: parsed.flags.contains("follow"))
    }

    /// `names` comma-separated in lines of at most 96 columns, each indented by `indent` spaces.
    private static func wrapped(_ names: [String], indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for (index, name) in names.enumerated() {
            let item = name + (index == names.count - 1 ? "" : ",")
            if !line.isEmpty && indent + line.utf8.count + 1 + item.utf8.count > 96 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + item
        }
        lines.append(line)
        return lines.map { String(repeating: " ", count: indent) + $0 }.joined(separator: "\n")
    }
}
