/// `appleid-mock reset`: a running mock back to its scenario's initial state.
enum ResetCommand {
    static let usage = """
    usage: appleid-mock reset [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

    Returns users, consents, codes, transfers, keys and the clock to the scenario's initial
    state; codes and tokens issued before stop working.

    \(ControlClient.optionsUsage)
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options, usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        Output.out(try ControlClient(parsed, environment: environment, usage: usage).call("POST", "/__mock/reset"))
        return 0
    }
}
