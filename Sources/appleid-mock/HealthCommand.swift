/// `appleid-mock health`: exit 0 when a running mock answers its health check, 1 otherwise —
/// for container health checks on images without curl.
enum HealthCommand {
    static let usage = """
    usage: appleid-mock health [--server URL] [--timeout SECONDS]

    Prints the mock's {"active_kid", "issuer", "status"} and exits 0 when it answers; exits 1
    when it cannot be reached or answers otherwise.

    \(ControlClient.optionsUsage)
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options, usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        Output.out(try ControlClient(parsed, environment: environment, usage: usage).call("GET", "/__mock/health"))
        return 0
    }
}
