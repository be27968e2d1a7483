import AppleIDMock
import Foundation
import MiniHTTPTesting

/// `MockClient` over the running server: each request on a fresh connection of the raw-socket
/// client, run on a thread of its own so its blocking reads never hold the cooperative pool
/// (house style rule 6) that the server's deferred handlers answer on.
struct LiveClient: MockClient {
    /// The server underneath, for the tests of what the wire does.
    let server: AppleIDMockServer

    var mode: MockMode { .live }

    func respond(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) async throws -> MockAnswer {
        let port = server.port
        let raw = try await offThePool {
            let client = try RawHTTPClient(port: port)
            guard headers.contains(where: { $0.0.lowercased() == "host" }) else {
                return try client.roundTrip(method, target, headers: headers, body: body)
            }
            // The client's own head starts with `Host: localhost`: write this one whole.
            var head = "\(method) \(target) HTTP/1.1\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
            try client.send(Array((head + "\r\n").utf8) + body)
            return try client.readResponse(headOnly: method == "HEAD")
        }
        return MockAnswer(live: raw, method: method)
    }

    func stop() async {
        await server.stop()
    }
}

/// Runs blocking `work` on a thread of its own and suspends until it returns.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
