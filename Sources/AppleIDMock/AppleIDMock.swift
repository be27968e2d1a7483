import Dispatch
import FoundationEssentials
import Glibc
import MiniHTTP

/// A running mock of appleid.apple.com. The CLI and the tests both start it through
/// `start(_:)`, so tests exercise the wiring users run. Import `AppleIDMock` into a Swift test
/// suite to run it in-process; `await stop()` ends it. `AppleIDMockServer.inMemory` gives the
/// same mock without a socket.
public final class AppleIDMockServer: Sendable {
    /// The HTTP server underneath.
    package let http: HTTPServer
    /// The address clients use (discovery URLs are built from it).
    public let baseURL: String
    /// The domain, routes, deliverer, journal and tick that `InMemoryMock` shares.
    let assembly: MockAssembly
    /// Real time in seconds since 1970, as configured (the in-process API's client secrets).
    let realTime: @Sendable () -> Double

    /// The Apple domain: scenario, clock, keys and all state.
    package var domain: AppleIDDomain { assembly.domain }
    /// Server-to-server notifications: their delivery and log.
    package var notifications: NotificationDeliverer { assembly.notifications }

    private init(http: HTTPServer, baseURL: String, assembly: MockAssembly, configuration: AppleIDMockConfiguration) {
        self.http = http
        self.baseURL = baseURL
        self.assembly = assembly
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
        let assembly: MockAssembly
        do {
            assembly = try MockAssembly(configuration)
        } catch {
            _ = tls?.value
            throw error
        }
        var http = configuration.http
        if let tls {
            do {
                http.tls = try tls.value.get()
            } catch {
                assembly.abandon()
                throw .tls(error)
            }
        }
        http.host = configuration.host
        http.log = assembly.httpLog
        http.port = configuration.port
        var smtp: SMTPServerConfiguration?
        if let smtpPort = configuration.smtpPort {
            var mail = SMTPServerConfiguration(handler: assembly.mailHandler)
            mail.host = configuration.host
            mail.port = smtpPort
            mail.hostname = "appleid-mock"
            mail.tls = http.tls
            mail.idleTimeout = configuration.smtpIdleTimeout
            mail.limits.maxMessageBytes = assembly.domain.scenario.mail.maxMessageBytes
            // A session holds at most a quarter of SMTP's budget: enough for the largest message.
            mail.maxBufferedMessageBytes = max(mail.maxBufferedMessageBytes, 4 * (mail.limits.maxMessageBytes + mail.limits.maxCommandLineBytes))
            smtp = mail
        }
        if let journal = assembly.journal {
            http.observer = http.observer.map { ObserverPair(first: journal, second: $0) } ?? journal
        }
        let server: HTTPServer
        do {
            server = try HTTPServer.start(configuration: http, routes: assembly.routes, smtp: smtp)
        } catch {
            // Nothing was queued yet: the deliverer ends at once, and the state file is closed
            // (a retry on another port can open it).
            assembly.abandon()
            throw .bind(error)
        }
        let baseURL = configuration.baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? Self.defaultBaseURL(server)
        assembly.site.set(baseURL)
        if !isLoopback(server.host) && configuration.controlToken == nil {
            if configuration.inContainer {
                configuration.logger(.warn)("listening on \(server.host) in a container, with no --control-token: whoever reaches the port it is "
                                            + "published on can drive the mock through /__mock; publish it on loopback only "
                                            + "(-p 127.0.0.1:\(server.port):\(server.port)) or set APPLEID_MOCK_CONTROL_TOKEN")
            } else {
                configuration.logger(.warn)("listening on \(server.host), beyond this machine, with no --control-token: anyone who can reach the port "
                                            + "can drive the mock through /__mock (mint tokens for any user, reset, move the clock, retire keys)")
            }
        }
        assembly.startWriting()
        assembly.startTicking()
        assembly.mailForwarder?.start()
        return AppleIDMockServer(http: server, baseURL: baseURL, assembly: assembly, configuration: configuration)
    }

    /// The bound port.
    public var port: Int { http.port }

    /// The bound SMTP port, when `smtpPort` was set.
    public var smtpPort: Int? { http.smtpPort }

    /// What the SMTP port received, with the relay's verdicts.
    package var mail: MailBox { assembly.mailbox }

    /// `http://HOST:PORT` as bound (`https://` when serving TLS).
    package var listenURL: String { http.url }

    /// Stops accepting, finishes in-flight requests (long polls answer at once with what they
    /// have); returns at once.
    func shutdown() {
        assembly.stopTicking()
        assembly.domain.events.releaseReaders()
        assembly.notifications.releaseReaders()
        assembly.journal?.releaseReaders()
        assembly.mailbox.releaseReaders()
        http.shutdown()
    }

    /// Blocks the calling thread until the HTTP loops have ended: for synchronous callers only
    /// (`await stopped()` in async code).
    @available(*, noasync, message: "blocks its thread: use `await stopped()` or `await stop()` in async code")
    func waitUntilStopped() { http.waitUntilStopped() }

    /// Suspends until the HTTP loops have ended.
    package func stopped() async { await http.stopped() }

    /// Stops and suspends until nothing of the mock runs, holding no thread: stops accepting
    /// (a new connection is refused), lets in-flight requests finish, ends the key rotation tick,
    /// and gives queued notifications their grace period (`notificationShutdownGrace`, ended
    /// early once none is pending); what is still undelivered is marked abandoned and listed on
    /// the log. Safe to call more than once.
    public func stop() async {
        shutdown()
        await http.stopped()
        await assembly.finish()
    }

    /// `await stop()` for synchronous code (a command's main thread after `sigwait`, a
    /// synchronous XCTest): blocks the calling thread until it has finished. Never call it from
    /// async code (the compiler refuses it there) or from a thread of the cooperative pool, whose
    /// threads the stop itself runs on.
    @available(*, noasync, message: "blocks its thread: use `await stop()` in async code")
    public func stop() {
        let done = DispatchSemaphore(value: 0)
        Task.detached { [self] in
            await stop()
            done.signal()
        }
        done.wait()
    }

    /// Whether `host` (an address the server listens on, IPv6 bracketed or not) is loopback.
    /// Every 127.0.0.0/8 address, `::1` in any spelling, IPv4-mapped 127/8, and `localhost`
    /// (`[::1]` was called "beyond this machine").
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
