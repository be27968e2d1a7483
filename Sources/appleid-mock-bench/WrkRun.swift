/// One wrk run: requests per second and latency percentiles, as wrk prints them.
struct WrkRun {
    /// Requests per second.
    var requestsPerSecond: Double
    /// Latency percentiles in milliseconds.
    var p50: Double
    var p99: Double
    /// Non-2xx answers and socket errors wrk counted.
    var errors: Int

    /// Loads `url` with `connections` keep-alive connections for `seconds`; nil without wrk.
    /// `headers` go with every request (e.g. `Connection: close` for a new connection each).
    static func run(url: String, connections: Int, threads: Int, seconds: Int, headers: [String] = []) -> WrkRun? {
        let headerArguments = headers.flatMap { ["-H", $0] }
        guard let wrk = Tool.find("wrk"),
              let output = Tool.run(wrk, ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency"] + headerArguments + [url]) else { return nil }
        var run = WrkRun(requestsPerSecond: 0, p50: 0, p99: 0, errors: 0)
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let first = fields.first else { continue }
            switch first {
            case "Requests/sec:": run.requestsPerSecond = Double(fields[1]) ?? 0
            case "50%": run.p50 = milliseconds(fields[1])
            case "99%": run.p99 = milliseconds(fields[1])
            case "Non-2xx": run.errors += Int(fields.last ?? "") ?? 0
            case "Socket": // "Socket errors: connect 0, read 0, write 0, timeout 0"
                run.errors += fields.compactMap { Int($0.trimmingSuffix(",")) }.reduce(0, +)
            default: continue
            }
        }
        return run.requestsPerSecond > 0 ? run : nil
    }

    /// "312.00us", "1.20ms", "2.00s" in milliseconds.
    private static func milliseconds(_ text: Substring) -> Double {
        for (suffix, scale) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0)] where text.hasSuffix(suffix) {
            return (Double(text.dropLast(suffix.count)) ?? 0) * scale
        }
        return 0
    }
}

private extension Substring {
    func trimmingSuffix(_ suffix: String) -> Substring { hasSuffix(suffix) ? dropLast(suffix.count) : self }
}
