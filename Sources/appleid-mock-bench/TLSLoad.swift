import Foundation
import Glibc
import MiniHTTP

/// The mock serving HTTPS with a certificate from `appleid-mock tls generate`, and nginx serving
/// the same `/auth/keys` bytes with the same certificate, key and protocols (TLS 1.2 and 1.3,
/// OpenSSL's defaults otherwise): cold start to the first answer over a fresh TLS connection,
/// idle memory, keep-alive throughput, and new connections per second (each a full handshake
/// and one request, `Connection: close`; wrk resumes no sessions).
struct TLSLoad {
    var coldStarts: [Double] = []
    var idleResidentMiB: Double = 0
    var keys: WrkRun?
    var nginxKeys: WrkRun?
    var handshakes: WrkRun?
    var nginxHandshakes: WrkRun?

    static func run(binary: String, options: BenchOptions, cores: Int, progress: (String) -> Void) throws -> TLSLoad {
        let directory = NSTemporaryDirectory() + "appleid-mock-bench-tls-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard Tool.run(binary, ["tls", "generate", "--out", directory, "--force"]) != nil else {
            throw ServerProcess.Failure(description: "`appleid-mock tls generate` failed")
        }
        let tls = ["--tls-cert", directory + "/cert.pem", "--tls-key", directory + "/key.pem"]
        var client = HTTPClient()
        client.caFile = directory + "/ca.pem"
        client.connectTimeout = 10
        client.responseTimeout = 10
        var load = TLSLoad()

        // One start more than measured, the first not counted: it makes the client's TLS context
        // (algorithms fetched, CA parsed), which a client makes once, not per connection.
        progress("HTTPS: cold start x\(options.coldStarts)")
        for run in 0...options.coldStarts {
            let start = Stopwatch.now()
            let server = try ServerProcess.startMock(binary: binary, arguments: tls)
            defer { server.stop() }
            let answer = try client.send("GET", url: "https://127.0.0.1:\(server.port)/auth/keys")
            if run > 0 { load.coldStarts.append(Stopwatch.milliseconds(since: start)) }
            guard answer.status == 200 else { throw ServerProcess.Failure(description: "/auth/keys over TLS answered \(answer.status)") }
        }

        let server = try ServerProcess.startMock(binary: binary, arguments: tls)
        defer { server.stop() }
        let body = try client.send("GET", url: "https://127.0.0.1:\(server.port)/auth/keys").body
        usleep(300_000)
        load.idleResidentMiB = server.residentMiB

        progress("HTTPS /auth/keys with wrk, keep-alive then a new connection per request, then nginx on the same bytes")
        let url = "https://127.0.0.1:\(server.port)/auth/keys"
        load.keys = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: options.duration)
        load.handshakes = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: options.duration,
                                     headers: ["Connection: close"])
        if load.keys != nil,
           let nginx = try StaticCeiling.start(body: body, workers: cores, tls: (directory + "/cert.pem", directory + "/key.pem")) {
            defer { nginx.stop() }
            let nginxURL = "https://127.0.0.1:\(nginx.port)/auth/keys"
            load.nginxKeys = WrkRun.run(url: nginxURL, connections: options.connections, threads: cores, seconds: options.duration)
            load.nginxHandshakes = WrkRun.run(url: nginxURL, connections: options.connections, threads: cores, seconds: options.duration,
                                              headers: ["Connection: close"])
        }
        return load
    }
}
