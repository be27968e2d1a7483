import Foundation

/// The request journal's cost: `/auth/keys` and code exchanges on a mock with the
/// journal on against one with `--journal off`, in the same run, alternating; and resident
/// memory once the ring is full against after `journaled` more requests (refused code
/// exchanges, each carrying a client_secret: the journal's heaviest common entry).
struct JournalLoad {
    /// `/auth/keys` req/s, mean of the runs of each.
    var keysOn: Double
    var keysOff: Double
    /// The median of the back-to-back pairs' on/off ratios (the figure held to the target).
    var keysPairRatio: Double
    /// Server CPU microseconds per `/auth/keys` request, median of the runs of each.
    var keysCPUOn: Double
    var keysCPUOff: Double
    /// Code exchanges per second.
    var exchangesOn: Double
    var exchangesOff: Double
    /// Resident memory with the ring just full, and after `journaled` more requests.
    var residentRingFull: Double
    var residentAfter: Double
    var journaled: Int
    var failures: Int

    var keysRatio: Double { keysPairRatio }
    var exchangesRatio: Double { exchangesOff > 0 ? exchangesOn / exchangesOff : 0 }
    var memoryGrowth: Double { residentRingFull > 0 ? (residentAfter - residentRingFull) / residentRingFull * 100 : 0 }

    /// Measures with `exchanges` exchanges per variant and `journaled` requests after the ring is full.
    static func run(binary: String, secret: String, options: BenchOptions, cores: Int, exchanges: Int, journaled: Int,
                    progress: (String) -> Void) throws -> JournalLoad {
        // Five pairs: one pair read on a minute when this machine drifts moves a median of three.
        let pairs = options.smoke ? 1 : 5
        progress("journal on against off: /auth/keys with wrk, \(options.duration) s each, in \(pairs) back-to-back pairs")
        var keys: [Bool: [Double]] = [:]
        var cpu: [Bool: [Double]] = [:]
        var pairRatios: [Double] = []
        var failures = 0
        // Each run has the machine to itself: a fresh mock, warmed for a second (the ring fills
        // and wraps), measured, stopped. With both mocks up at once, the one started first read
        // about 5% slower even when both were `--journal off`. The pairs run back to back (this
        // machine's speed drifts from minute to minute) in alternating order; the figure is the
        // median pair's ratio.
        for pair in 0..<pairs {
            var rates: [Bool: Double] = [:]
            for journaled in pair % 2 == 0 ? [false, true] : [true, false] {
                let server = try ServerProcess.startMock(binary: binary, arguments: journaled ? [] : ["--journal", "off"])
                defer { server.stop() }
                let url = "http://127.0.0.1:\(server.port)/auth/keys"
                _ = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: 1)
                let before = server.cpuSeconds
                let run = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: options.duration)
                let rate = run?.requestsPerSecond ?? 0
                rates[journaled] = rate
                keys[journaled, default: []].append(rate)
                if rate > 0 { cpu[journaled, default: []].append((server.cpuSeconds - before) / (rate * Double(options.duration)) * 1e6) }
                failures += run?.errors ?? 0
            }
            if let off = rates[false], off > 0 { pairRatios.append((rates[true] ?? 0) / off) }
        }
        progress("journal on against off: \(exchanges) code exchanges each, alternating")
        var exchangeRates: [Bool: [Double]] = [:]
        let rounds = max(1, min(options.rounds, exchanges / 100))
        // Alone too, in the order off, on, on, off.
        for journaled in [false, true, true, false] {
            let server = try ServerProcess.startMock(binary: binary, arguments: journaled ? [] : ["--journal", "off"])
            defer { server.stop() }
            let load = try ExchangeLoad.run(server: server, secret: secret, total: exchanges / 2, rounds: max(1, rounds / 2),
                                            connections: options.connections, threads: cores)
            exchangeRates[journaled, default: []].append(load.exchangesPerSecond)
            failures += load.failures
        }
        progress("journal memory: the ring filled with refused exchanges, then \(journaled) more")
        let memory = try ServerProcess.startMock(binary: binary)
        defer { memory.stop() }
        let request = ExchangeLoad.tokenRequest(code: "c0000000000000000000000000000000.0.abcd.AAAAAAAAAAAAAAAAAAAAAA", secret: secret)
        failures += try refused(memory, request, count: 10_000, connections: options.connections, threads: cores)
        let full = memory.residentMiB
        failures += try refused(memory, request, count: journaled, connections: options.connections, threads: cores)
        func mean(_ values: [Double]?) -> Double { (values ?? []).reduce(0, +) / Double(max(values?.count ?? 0, 1)) }
        return JournalLoad(keysOn: mean(keys[true]), keysOff: mean(keys[false]), keysPairRatio: Percentiles(pairRatios).median,
                           keysCPUOn: Percentiles(cpu[true] ?? []).median, keysCPUOff: Percentiles(cpu[false] ?? []).median,
                           exchangesOn: mean(exchangeRates[true]),
                           exchangesOff: mean(exchangeRates[false]), residentRingFull: full, residentAfter: memory.residentMiB,
                           journaled: journaled, failures: failures)
    }

    /// Sends `request` `count` times over `connections` connections; each must be refused with 400.
    private static func refused(_ server: ServerProcess, _ request: [UInt8], count: Int, connections: Int, threads: Int) throws -> Int {
        let clients = try (0..<connections).map { _ in try RawConnection(port: server.port) }
        return LoadDriver.run(clients, threads: threads) { index in
            let share = count / connections + (index < count % connections ? 1 : 0)
            return LoadDriver.Script(requests: Array(repeating: request, count: share)) { _, status, _, _ in status == 400 }
        }
    }
}
