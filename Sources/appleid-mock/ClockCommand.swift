import AppleIDMock
import JOSE

/// `appleid-mock clock`: read or move a running mock's clock.
enum ClockCommand {
    static let usage = """
    usage: appleid-mock clock [show]              the mock's now, frozen or not, offset from real time
           appleid-mock clock advance SECONDS     move it (back when negative)
           appleid-mock clock set TIME            go to an RFC 3339 time, e.g. 2030-01-01T00:00:00Z
           appleid-mock clock freeze | unfreeze   stop it, or let it run
           [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

    \(ControlClient.optionsUsage)

    Prints the clock as {"epoch", "frozen", "now", "offset"}.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options, usage: usage)
        var body = JSONObject()
        switch parsed.positionals.first {
        case nil, "show":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(try ControlClient(parsed, environment: environment, usage: usage).call("GET", "/__mock/clock"))
            return 0
        case "advance":
            try parsed.requirePositionals(2, usage: usage)
            guard parsed.positionals.count == 2, let seconds = Double(parsed.positionals[1]), seconds.isFinite else {
                throw UsageError(message: "advance needs a number of SECONDS", usage: usage)
            }
            body["advance"] = seconds == seconds.rounded() && abs(seconds) < 1e15 ? .int(Int64(seconds)) : .double(seconds)
        case "set":
            try parsed.requirePositionals(2, usage: usage)
            guard parsed.positionals.count == 2, RFC3339.parse(parsed.positionals[1]) != nil else {
                throw UsageError(message: "set needs an RFC 3339 TIME such as 2030-01-01T00:00:00Z", usage: usage)
            }
            body["set"] = .string(parsed.positionals[1])
        case "freeze", "unfreeze":
            try parsed.requirePositionals(1, usage: usage)
            body["freeze"] = .bool(parsed.positionals[0] == "freeze")
        case let other?:
            throw UsageError(message: "unknown subcommand \"\(other)\"", usage: usage)
        }
        Output.out(try ControlClient(parsed, environment: environment, usage: usage).call("POST", "/__mock/clock", body: body))
        return 0
    }
}
