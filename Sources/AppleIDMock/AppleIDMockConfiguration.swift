import FoundationEssentials
import Glibc
import MiniHTTP

/// Everything `AppleIDMockServer.start` needs; every field has a default, so
/// `AppleIDMockConfiguration()` serves the built-in scenario on 127.0.0.1:8080.
public struct AppleIDMockConfiguration: Sendable {
    /// The world the mock pretends Apple knows.
    public var scenario: Scenario = .default
    /// Address to bind (`127.0.0.1`, `0.0.0.0`, `::1`, `::`, `localhost`).
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks an ephemeral one.
    public var port: Int = 8080
    /// The `iss` of every token minted; Apple's by default, because several widely used
    /// verifiers hard-code it, whatever address the mock listens on.
    package var issuer: String = "https://appleid.apple.com"
    /// The address clients use to reach the mock, for the discovery document's URLs; nil means
    /// `http://<host>:<bound port>` (with `localhost` for a wildcard host).
    public var baseURL: String?
    /// Overrides `scenario.signingKeys.directory`.
    public var keysDirectory: String?
    /// HTTP limits, timeouts and threads (`host` and `port` above take precedence).
    package var http = HTTPServerConfiguration()
    /// PEM certificate chain and private key files: the port serves HTTPS only. Loaded while
    /// the signing keys load (a ready `http.tls` is used as it is).
    package var tlsFiles: (certificateChain: String, privateKey: String)?
    /// Real time in seconds since 1970 (the system clock); the mock clock runs on it. Where the
    /// mock clock starts is the scenario's `clock`.
    public var realTime: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    /// Randomness for identifiers (tests may pass their own; a seed wins when set).
    package var random: RandomSource = .system
    /// `serve --seed N`: one seeded source for every draw (codes, tokens, MAC secret, `jti`,
    /// kids, RSA keys made at run time, the order of `/auth/keys`), so a scripted run on a
    /// frozen clock answers byte for byte the same in every process. Wins over the scenario's
    /// `seed`.
    public var seed: UInt64?

    /// Where the mock's draws come from: `seed`, else the scenario's `seed`, else `random`.
    /// The one place the seed is resolved.
    var randomSource: RandomSource { (seed ?? scenario.seed).map(RandomSource.seeded) ?? random }

    /// Most authorization codes held unredeemed at once; beyond it sign-ins are refused with a
    /// 503 until codes are redeemed or expire.
    package var maxPendingCodes: Int = 100_000
    /// PEM CA certificates `https` notification receivers are checked against; nil uses the
    /// system store.
    package var notificationCAFile: String?
    /// Seconds a notification receiver has to accept the connection, and then to answer.
    package var notificationConnectTimeout: Double = 5
    package var notificationResponseTimeout: Double = 10
    /// Seconds queued notifications get to go out when the mock stops.
    package var notificationShutdownGrace: Double = 3
    /// Where notifications go: nil POSTs them over HTTP(S) with the CA file and timeouts above;
    /// a test passes its own to record them without a receiver.
    public var notificationTransport: (any NotificationTransport)?
    /// Names accepted in the `Host` (and `Origin`) of control API requests besides IP literals
    /// and `localhost`, e.g. a Docker service name (DNS rebinding).
    package var allowedHosts: [String] = []
    /// When set, every control API route but `/__mock/health` requires
    /// `Authorization: Bearer <token>` (401 otherwise); Apple's routes stay open, as Apple's are
    /// (the guard stops browsers, not direct callers on a network).
    package var controlToken: String?
    /// Whether the mock runs in a container (Docker's `/.dockerenv`, podman's
    /// `/run/.containerenv`), where binding every interface is how a port is published and only
    /// the publishing side knows whether it stays on loopback: the exposure warning then says what
    /// to do there instead.
    package var inContainer: Bool = ["/.dockerenv", "/run/.containerenv"].contains { (path: String) in access(path, F_OK) == 0 }
    /// Where the mock says what it decided on its own (key fallback, exposure warnings) and,
    /// from `info` on, why Apple's endpoints refused a request: one line each, no newline.
    public var log: @Sendable (String) -> Void = AppleIDMockLog.standardError
    /// Which lines reach `log`: `info` (the default) adds a line per refused request, `debug` a
    /// line per answered one.
    public var logLevel: AppleIDMockLogLevel = .info
    /// Whether the mock keeps the request journal (`GET /__mock/requests`, `requests(matching:)`);
    /// `serve --journal off` turns it off, and its routes answer 409.
    public var journal = true
    /// The SMTP port standing in for Apple's Private Email Relay (`serve --smtp-port`): nil (the
    /// default) serves none; 0 picks a free port (`AppleIDMockServer.smtpPort` says which).
    public var smtpPort: Int?
    /// Seconds an SMTP client may stay silent before it is told 421 and let go.
    var smtpIdleTimeout: Double = 300
    /// `smtp://HOST:PORT`: where forwarded and direct mail goes on to (a catcher such as Mailpit);
    /// nil keeps it in the mailbox only.
    package var mailForward: String?
    /// `serve --state FILE`: a SQLite file that keeps the mock's state across restarts (users,
    /// consents, codes, keys, clock, MAC secret, notifications, the event sequence); each
    /// answer is sent only after what it depends on is committed. Nil keeps everything in memory.
    public var statePath: String?

    /// The defaults.
    public init() {}

    /// `log` for lines of `level`, or a sink that drops them when `logLevel` is quieter.
    func logger(_ level: AppleIDMockLogLevel) -> @Sendable (String) -> Void {
        guard level <= logLevel else { return { _ in } }
        return log
    }
}
