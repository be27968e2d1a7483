import Dispatch
import MiniHTTP

/// The mock inside a Swift backend's test suite: start it on an ephemeral port (or in memory),
/// point the backend at `baseURL`, and script Apple through `MockControls`.
extension AppleIDMockServer: MockControls {
    /// Starts the mock for a test: `scenario` (default: the built-in one) on an ephemeral
    /// loopback port, log lines dropped unless `log` is given. `configure` adjusts the rest.
    public static func startForTesting(scenario: Scenario = .default, keysDirectory: String? = nil,
                                       log: @escaping @Sendable (String) -> Void = { _ in },
                                       configure: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws(AppleIDMockError) -> AppleIDMockServer {
        var configuration = AppleIDMockConfiguration()
        configuration.scenario = scenario
        configuration.port = 0
        configuration.keysDirectory = keysDirectory
        configuration.log = log
        configure(&configuration)
        return try start(configuration)
    }

    /// The mock of `configuration` with no socket, for tests that drive the route table in
    /// memory, notifications included (`configuration.notificationTransport` records them without
    /// a receiver). Its `baseURL` is `configuration.baseURL`, else the configured host and port;
    /// TLS and HTTP limits go unused. End it with `await stop()`.
    public static func inMemory(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration()) throws(AppleIDMockError) -> InMemoryMock {
        try InMemoryMock(configuration)
    }

    /// The mock underneath.
    public var core: MockCore { MockCore(assembly: assembly, realTime: realTime) }

    /// Sends `request` over a new connection to `listenURL` (`Connection: close`), on a thread
    /// of its own, and returns the answer; a connection that fails answers 502 with the reason.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let client = {
            var client = HTTPClient()
            client.maxBodyBytes = 16 * 1024 * 1024
            client.responseTimeout = 120
            return client
        }()
        let url = listenURL + request.target
        let headers = request.headers.fields.filter { field in
            let name = field.name.lowercased()
            return name != "content-length" && name != "connection" && name != "host"
        }.map { ($0.name, $0.value) }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let answer = try client.send(request.method.rawValue, url: url, headers: headers, body: request.body)
                    var response = HTTPResponse(status: HTTPStatus(answer.status), body: answer.body)
                    for (name, value) in answer.headers.fields where name.lowercased() != "content-length" && name.lowercased() != "connection" {
                        response.headers.add(name, value)
                    }
                    continuation.resume(returning: response)
                } catch {
                    continuation.resume(returning: HTTPResponse(status: HTTPStatus(502), body: Array("\(error)".utf8)))
                }
            }
        }
    }
}

extension InMemoryMock: MockControls {
    /// The mock underneath.
    public var core: MockCore { MockCore(assembly: assembly, realTime: realTime) }
}
