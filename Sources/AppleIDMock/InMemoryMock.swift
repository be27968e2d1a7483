import MiniHTTP
import Synchronization

/// The mock without a socket: the route table `AppleIDMockServer` serves — control guard,
/// request log, journal and notification deliverer included — answering `HTTPRequest` values directly,
/// the way Hummingbird's router test mode drives an application. For tests of what an endpoint
/// answers; what the wire adds (framing, `Content-Length`, limits, timeouts, TLS) needs the real
/// server. Notifications go out through `notificationTransport` (a test's recorder) or HTTP.
/// Made by `AppleIDMockServer.inMemory`; `await stop()` ends it.
public final class InMemoryMock: Sendable {
    /// The address clients would use (discovery URLs are built from it).
    public let baseURL: String
    let assembly: MockAssembly
    let realTime: @Sendable () -> Double
    private let stopped = Atomic<Bool>(false)

    /// The Apple domain: scenario, clock, keys and all state.
    package var domain: AppleIDDomain { assembly.domain }
    /// Server-to-server notifications: their delivery and log.
    package var notifications: NotificationDeliverer { assembly.notifications }
    /// The route table, exactly as the server runs it.
    package var routes: RouteTable { assembly.routes }

    /// Builds the mock of `configuration`, nothing bound (its TLS and HTTP limits are not used),
    /// and starts its key rotation tick when the scenario has one. Clients would reach it at
    /// `configuration.baseURL`, else at `http://<host>:<port>` as configured.
    init(_ configuration: AppleIDMockConfiguration) throws(AppleIDMockError) {
        assembly = try MockAssembly(configuration)
        realTime = configuration.realTime
        let host = configuration.host.contains(":") && !configuration.host.hasPrefix("[") ? "[\(configuration.host)]" : configuration.host
        let base = configuration.baseURL ?? "http://\(host):\(configuration.port)"
        baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        assembly.site.set(baseURL)
        assembly.startWriting()
        assembly.startTicking()
    }

    /// The answer to `request` as the server's handler gives it: before the serializer adds
    /// `Content-Length` and `Connection`, and with the body of a HEAD answer kept. After `stop()`
    /// every request is answered 503 Service Unavailable (plain text).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        guard !stopped.load(ordering: .acquiring) else { return .plainError(.serviceUnavailable) }
        guard let journal = assembly.journal else { return await assembly.routes.respond(to: request, log: assembly.httpLog) }
        let started = ContinuousClock.now
        let response = await assembly.routes.respond(to: request, log: assembly.httpLog)
        let elapsed = started.duration(to: .now).components
        journal.observe(HTTPExchange(id: 0, request: request, status: response.status, responseHeaders: response.headers,
                                     responseBodyCount: response.body.count,
                                     microseconds: UInt64(max(0, elapsed.seconds)) * 1_000_000 + UInt64(max(0, elapsed.attoseconds / 1_000_000_000_000)),
                                     note: response.note))
        return response
    }

    /// Stops, suspending without holding a thread until nothing of the mock runs: later requests
    /// are answered 503, the key rotation tick ends, and queued notifications get their grace
    /// period (`notificationShutdownGrace`, ended early once none is pending); what is still
    /// undelivered is marked abandoned and listed on the log. Requests already being answered
    /// finish in their callers' tasks. Safe to call more than once.
    public func stop() async {
        stopped.store(true, ordering: .releasing)
        await assembly.finish()
    }
}
