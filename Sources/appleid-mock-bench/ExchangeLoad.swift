import Foundation
import Synchronization

/// Code exchanges under load: in each round, `connections` keep-alive clients first obtain
/// codes from the headless authorize (`/__mock/authorize`), then redeem them all at
/// `/auth/token` with a real ES256 client_secret. Only the redemptions are timed; memory is
/// read after every round.
struct ExchangeLoad {
    /// Redemptions per second over all rounds (redeem phases only).
    var exchangesPerSecond: Double
    /// Redemption latency percentiles in milliseconds.
    var p50: Double
    var p99: Double
    /// Resident memory after each round, MiB.
    var residentAfterRound: [Double]
    /// Requests that did not answer 200.
    var failures: Int
    /// CPU time per redemption, in microseconds: the server's, and the load generator's.
    var serverMicrosPerExchange: Double
    var clientMicrosPerExchange: Double

    /// Runs `total` exchanges in `rounds` rounds over `connections` connections, driven by
    /// `threads` client threads.
    static func run(server: ServerProcess, secret: String, total: Int, rounds: Int, connections: Int, threads: Int) throws -> ExchangeLoad {
        let perRound = total / rounds
        var latencies: [Double] = []
        latencies.reserveCapacity(total)
        var redeemNanoseconds: UInt64 = 0
        var resident: [Double] = []
        var failures = 0
        var serverCPU = 0.0
        var clientCPU = 0.0
        let clients = try (0..<connections).map { _ in try RawConnection(port: server.port) }
        for _ in 0..<rounds {
            // Each connection's share of this round.
            let shares = (0..<connections).map { perRound / connections + ($0 < perRound % connections ? 1 : 0) }
            let collected = Collected(connections)
            failures += LoadDriver.run(clients, threads: threads) { index in
                LoadDriver.Script(requests: Array(repeating: authorizeRequest, count: shares[index])) { _, status, body, _ in
                    guard status == 200, let code = Self.code(in: body) else {
                        Self.report("authorize answered \(status): \(String(decoding: body, as: UTF8.self))")
                        return false
                    }
                    collected.codes[index].append(code)
                    return true
                }
            }
            let start = Stopwatch.now()
            let serverBefore = server.cpuSeconds
            let clientBefore = ServerProcess.ownCPUSeconds
            failures += LoadDriver.run(clients, threads: threads) { index in
                LoadDriver.Script(requests: collected.codes[index].map { tokenRequest(code: $0, secret: secret) }) { _, status, body, milliseconds in
                    guard status == 200 else {
                        Self.report("token answered \(status): \(String(decoding: body, as: UTF8.self))")
                        return false
                    }
                    collected.latencies[index].append(milliseconds)
                    return true
                }
            }
            redeemNanoseconds += Stopwatch.now() - start
            serverCPU += server.cpuSeconds - serverBefore
            clientCPU += ServerProcess.ownCPUSeconds - clientBefore
            for part in collected.latencies { latencies += part }
            resident.append(server.residentMiB)
        }
        let percentiles = Percentiles(latencies)
        return ExchangeLoad(exchangesPerSecond: Double(latencies.count) / (Double(redeemNanoseconds) / 1e9),
                            p50: percentiles.median, p99: percentiles.value(0.99),
                            residentAfterRound: resident, failures: failures,
                            serverMicrosPerExchange: serverCPU / Double(max(latencies.count, 1)) * 1e6,
                            clientMicrosPerExchange: clientCPU / Double(max(latencies.count, 1)) * 1e6)
    }

    /// Per-connection results; each index is written by the one thread driving that connection.
    final class Collected: @unchecked Sendable {
        var codes: [[String]]
        var latencies: [[Double]]
        init(_ count: Int) {
            codes = Array(repeating: [], count: count)
            latencies = Array(repeating: [], count: count)
        }
    }

    /// alice's headless web sign-in: its answer carries a code.
    static let authorizeRequest: [UInt8] = {
        let body = #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","# +
            #""response_type":"code","response_mode":"form_post","user":"alice"}"#
        return Array("POST /__mock/authorize HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }()

    /// The redemption of `code` by the web client.
    static func tokenRequest(code: String, secret: String) -> [UInt8] {
        let body = "client_id=com.example.web&client_secret=\(secret)&code=\(code)&grant_type=authorization_code"
            + "&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback"
        return Array("POST /auth/token HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    /// The `"code":"…"` value of a headless authorize answer.
    static func code(in body: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: #""code":""#)?.upperBound, let end = text[start...].firstIndex(of: "\"") else { return nil }
        return String(text[start..<end])
    }

    private static let reported = Atomic<Int>(0)

    /// Prints the first few failures.
    private static func report(_ text: String) {
        if reported.add(1, ordering: .relaxed).newValue <= 3 {
            FileHandle.standardError.write(Data("appleid-mock-bench: \(text)\n".utf8))
        }
    }
}
