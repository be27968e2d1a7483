import Foundation

/// The state file's cost: code exchanges on a mock with `--state FILE` (every answer
/// after its durable commit) against one without, alternating; `/auth/keys` with and without
/// (it writes nothing); and idle memory with `--state`. The file lives beside the system's
/// temporary files, on disk, and is removed after each run.
struct StateLoad {
    /// Code exchanges per second.
    var exchangesOn: Double
    var exchangesOff: Double
    /// `/auth/keys` req/s, the median pair's ratio.
    var keysOn: Double
    var keysOff: Double
    var keysPairRatio: Double
    /// Resident memory of an idle mock with `--state`, after one request.
    var idleResident: Double
    var failures: Int

    var exchangesRatio: Double { exchangesOff > 0 ? exchangesOn / exchangesOff : 0 }

    /// Measures with `exchanges` exchanges per variant.
    static func run(binary: String, secret: String, options: BenchOptions, cores: Int, exchanges: Int, progress: (String) -> Void) throws -> StateLoad {
        var failures = 0
        var run = 0
        func withMock<T>(state: Bool, _ body: (ServerProcess) throws -> T) throws -> T {
            run += 1
            let path = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())-\(run).sqlite"
            defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let server = try ServerProcess.startMock(binary: binary, arguments: state ? ["--state", path] : [])
            defer { server.stop() }
            return try body(server)
        }
        progress("--state against none: \(exchanges) code exchanges each, alternating")
        var exchangeRates: [Bool: [Double]] = [:]
        let rounds = max(1, min(options.rounds, exchanges / 100))
        for state in [false, true, true, false] {
            let load = try withMock(state: state) { server in
                try ExchangeLoad.run(server: server, secret: secret, total: exchanges / 2, rounds: max(1, rounds / 2),
                                     connections: options.connections, threads: cores)
            }
            exchangeRates[state, default: []].append(load.exchangesPerSecond)
            failures += load.failures
        }
        let pairs = options.smoke ? 1 : 3
        progress("--state against none: /auth/keys with wrk, \(options.duration) s each, in \(pairs) back-to-back pairs")
        var keys: [Bool: [Double]] = [:]
        var pairRatios: [Double] = []
        for pair in 0..<pairs {
            var rates: [Bool: Double] = [:]
            for state in pair % 2 == 0 ? [false, true] : [true, false] {
                let rate = try withMock(state: state) { server -> Double in
                    let url = "http://127.0.0.1:\(server.port)/auth/keys"
                    _ = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: 1)
                    let measured = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: options.duration)
                    failures += measured?.errors ?? 0
                    return measured?.requestsPerSecond ?? 0
                }
                rates[state] = rate
                keys[state, default: []].append(rate)
            }
            if let off = rates[false], off > 0 { pairRatios.append((rates[true] ?? 0) / off) }
        }
        progress("--state: idle memory")
        let idle = try withMock(state: true) { server -> Double in
            _ = try RawConnection(port: server.port).exchange(RawConnection.keysRequest)
            usleep(300_000)
            return server.residentMiB
        }
        func mean(_ values: [Double]?) -> Double { (values ?? []).reduce(0, +) / Double(max(values?.count ?? 0, 1)) }
        return StateLoad(exchangesOn: mean(exchangeRates[true]), exchangesOff: mean(exchangeRates[false]), keysOn: mean(keys[true]),
                         keysOff: mean(keys[false]), keysPairRatio: Percentiles(pairRatios).median, idleResident: idle, failures: failures)
    }
}
