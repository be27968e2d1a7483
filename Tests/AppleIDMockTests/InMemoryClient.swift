import AppleIDMock
import MiniHTTP

/// `MockClient` over `InMemoryMock`: the server's own route table, no socket.
struct InMemoryClient: MockClient {
    /// The mock underneath.
    let mock: InMemoryMock

    var mode: MockMode { .inMemory }

    func respond(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) async throws -> MockAnswer {
        // The head the raw-socket client writes (RawHTTPClient.request).
        var head = HTTPHeaders()
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head.add("Host", "localhost") }
        for (name, value) in headers { head.add(name, value) }
        if !body.isEmpty || method == "POST" { head.add("Content-Length", String(body.count)) }
        let response = await mock.respond(HTTPMethod(rawValue: method), target, headers: head, body: body)
        return MockAnswer(inMemory: response, method: method)
    }

    func stop() async {
        await mock.stop()
    }
}
