import Glibc

/// `appleid-mock health`: exit 0 when a running mock answers its health check, 1 otherwise —
/// for container health checks on images without curl, and for scripts that start a mock in the
/// background and must wait until it answers (`--wait`).
enum HealthCommand {
    static let usage = """
    usage: appleid-mock health [--wait SECONDS] [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

    Prints the mock's {"active_kid", "issuer", "status"} and exits 0 when it answers; exits 1
    when it cannot be reached or answers otherwise.

      --wait SECONDS     keep trying (every 100 ms) until the mock answers or SECONDS pass,
                         e.g. right after `appleid-mock serve &` in a script (default 0: once)
    \(ControlClient.optionsUsage)
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["wait"]), usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        let wait = try parsed.integer("wait", default: 0, range: 0...3600, usage: usage)
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += wait
        while true {
            do {
                Output.out(try client.call("GET", "/__mock/health"))
                return 0
            } catch let failure as CommandFailure {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                guard (now.tv_sec, now.tv_nsec) < (deadline.tv_sec, deadline.tv_nsec) else { throw failure }
                var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
                var left = timespec()
                while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            }
        }
    }
}
