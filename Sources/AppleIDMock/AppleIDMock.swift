import Dispatch
import FoundationEssentials
import Glibc
import MiniHTTP

/// A running mock of appleid.apple.com. The CLI and the tests both start it through
/// `start(_:)`, so tests exercise the wiring users run. Import `AppleIDMock` into a Swift test
/// suite to run it in-process.
public final class AppleIDMockServer: Sendable {
    /// The HTTP server underneath.
    public let http: HTTPServer
    /// The Apple domain: scenario, clock, keys and all state.
    public let domain: AppleIDDomain
    /// The address clients use (discovery URLs are built from it).
    public let baseURL: String
    /// Server-to-server notifications: their delivery and log.
    public let notifications: NotificationDeliverer
    /// Runs the scenario's key rotation pattern while the clock runs on real time.
    private let rotation: Task<Void, Never>?
    /// Set when the server stops: a key catch-up on the work thread ends early.
    private let stopping: StopFlag
    private let notificationGrace: Double
    private let log: @Sendable (String) -> Void
    /// Real time in seconds since 1970, as configured (the in-process API's client secrets).
    let realTime: @Sendable () -> Double

    private init(http: HTTPServer, domain: AppleIDDomain, baseURL: String, notifications: NotificationDeliverer, rotation: Task<Void, Never>?,
                 stopping: StopFlag, configuration: AppleIDMockConfiguration) {
        self.stopping = stopping
        self.http = http
        self.domain = domain
        self.baseURL = baseURL
        self.notifications = notifications
        self.rotation = rotation
        notificationGrace = configuration.notificationShutdownGrace
        log = configuration.logger(.warn)
        realTime = configuration.realTime
    }

    /// Loads keys, binds, and starts serving; returns once connections are accepted.
    public static func start(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration()) throws(AppleIDMockError) -> AppleIDMockServer {
        // The TLS context (OpenSSL fetching its algorithms, the files parsed and checked) is made
        // on another thread while the signing keys load: both are a good part of a cold start.
        let tls = configuration.tlsFiles.map { files in
            BackgroundResult { () throws(TLSServerContext.Failure) in
                try TLSServerContext(certificateChain: files.certificateChain, privateKey: files.privateKey)
            }
        }
        let domain: AppleIDDomain
        do {
            domain = try AppleIDDomain(configuration: configuration)
        } catch {
            _ = tls?.value
            throw error
        }
        let site = SiteAddress()
        var http = configuration.http
        if let tls {
            do {
                http.tls = try tls.value.get()
            } catch {
                throw .tls(error)
            }
        }
        http.host = configuration.host
        http.port = configuration.port
        let notifications = makeDeliverer(domain, configuration)
        let server: HTTPServer
        do {
            server = try HTTPServer.start(configuration: http, routes: Routes.table(domain: domain, site: site, control: controlGuard(configuration),
                                                                                   notifications: notifications, requests: requestLog(configuration)))
        } catch {
            notifications.stop(grace: 0)
            throw .bind(error)
        }
        let baseURL = configuration.baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? Self.defaultBaseURL(server)
        site.set(baseURL)
        if !isLoopback(server.host) && configuration.controlToken == nil {
            configuration.logger(.warn)("listening on \(server.host), beyond this machine, with no --control-token: anyone who can reach the port "
                                        + "can drive the mock through /__mock (mint tokens for any user, reset, move the clock, retire keys)")
        }
        var rotation: Task<Void, Never>?
        let stopping = StopFlag()
        if configuration.scenario.signingKeys.rotation != nil || !configuration.scenario.events.isEmpty {
            // Once a second: a running clock reaches the pattern's next step and the timeline's
            // next event without anyone moving it. Key generation happens here, off the I/O loops.
            rotation = Task.detached { [state = domain.state, work = domain.blockingWork, stopping] in
                while !Task.isCancelled {
                    await work.run {
                        state.tick()
                        // On the work thread, Task.isCancelled says nothing: the server's flag does.
                        state.advanceKeySchedule(stopping: { stopping.value.load(ordering: .relaxed) })
                    }
                    try? await Task.sleep(nanoseconds: 1_000_000_000)
                }
            }
        }
        return AppleIDMockServer(http: server, domain: domain, baseURL: baseURL, notifications: notifications, rotation: rotation,
                                 stopping: stopping, configuration: configuration)
    }

    /// The mock's route table over a new domain, with no socket: answer requests in memory with
    /// `RouteTable.respond(to:)` (fuzzing, and tests that need no wire). `baseURL` stands for the
    /// address clients would use.
    public static func routes(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration(),
                              baseURL: String = "http://127.0.0.1:8080") throws(AppleIDMockError) -> RouteTable {
        let domain = try AppleIDDomain(configuration: configuration)
        let site = SiteAddress()
        site.set(baseURL)
        return Routes.table(domain: domain, site: site, control: controlGuard(configuration), requests: requestLog(configuration))
    }

    /// The bound port.
    public var port: Int { http.port }

    /// `http://HOST:PORT` as bound (`https://` when serving TLS).
    public var listenURL: String { http.url }

    /// Stops accepting, finishes in-flight requests; returns at once.
    public func shutdown() {
        stopping.value.store(true, ordering: .relaxed)
        rotation?.cancel()
        http.shutdown()
    }

    /// Blocks until stopped (not for async code).
    public func waitUntilStopped() { http.waitUntilStopped() }

    /// Suspends until stopped.
    public func stopped() async { await http.stopped() }

    /// `shutdown()` and wait; queued notifications get their grace period, and what is still
    /// undelivered is listed on the log.
    public func stop() {
        shutdown()
        http.waitUntilStopped()
        // The rotation task may be generating a key: nothing of the server runs after stop().
        if let rotation {
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                await rotation.value
                done.signal()
            }
            done.wait()
        }
        finishNotifications()
        AppleIDMockLog.flush()
    }

    /// Gives queued notifications their grace period, then lists what was not delivered.
    public func finishNotifications() {
        for record in notifications.stop(grace: notificationGrace) {
            log("notification \(record.id) (\(record.type) for \(record.userID)) to \(record.url ?? "-") undelivered after \(record.attempts.count) attempts")
        }
    }

    private static func makeDeliverer(_ domain: AppleIDDomain, _ configuration: AppleIDMockConfiguration) -> NotificationDeliverer {
        let transport = HTTPNotificationTransport(caFile: configuration.notificationCAFile, connectTimeout: configuration.notificationConnectTimeout,
                                                  responseTimeout: configuration.notificationResponseTimeout)
        return NotificationDeliverer(mockState: domain.state, scenario: domain.scenario, issuer: domain.issuer, transport: transport, retryDelays: domain.scenario.compatibility.notificationRetryDelays,
                                     workers: 4, realTime: configuration.realTime, log: configuration.logger(.warn)) { name, body in
            LoopThread.start(name: name, body)
        }
    }

    /// The request lines of `configuration`'s level, to its log.
    private static func requestLog(_ configuration: AppleIDMockConfiguration) -> RequestLog {
        RequestLog(level: configuration.logLevel, sink: configuration.log)
    }

    /// The control API's guard: IP literals, localhost, the configured names and the host of the base URL.
    private static func controlGuard(_ configuration: AppleIDMockConfiguration) -> ControlGuard {
        var names = configuration.allowedHosts
        if let base = configuration.baseURL, let host = URL(string: base)?.host { names.append(host) }
        return ControlGuard(allowedHosts: names, token: configuration.controlToken)
    }

    /// Whether `host` (an address the server listens on, IPv6 bracketed or not) is loopback.
    /// Every 127.0.0.0/8 address, `::1` in any spelling, IPv4-mapped 127/8, and `localhost`
    /// (probe N16: `[::1]` was called "beyond this machine").
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var name = Substring(host)
        if name.hasPrefix("[") {
            guard name.hasSuffix("]") else { return false }
            name = name.dropFirst().dropLast()
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(name), &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(name), &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return (bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1) || (mapped && bytes[12] == 127)
    }

    private static func defaultBaseURL(_ server: HTTPServer) -> String {
        switch server.host {
        case "0.0.0.0", "::": "\(server.scheme)://localhost:\(server.port)"
        default: server.url
        }
    }
}
