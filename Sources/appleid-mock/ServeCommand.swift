import AppleIDMock
import FoundationEssentials
import Glibc
import MiniHTTP

/// `appleid-mock serve`: runs the server until SIGINT or SIGTERM, then exits 0.
enum ServeCommand {
    static let usage = """
    usage: appleid-mock [serve] [--scenario FILE] [--host HOST] [--port PORT] [--keys DIR]
                        [--issuer URL] [--base-url URL] [--allowed-host NAMES]
                        [--notification-ca FILE] [--notification-timeout SECONDS]
                        [--tls-cert FILE --tls-key FILE] [--control-token TOKEN]
                        [--log-level LEVEL] [--seed N] [--journal on|off]
                        [--smtp-port PORT] [--mail-forward smtp://HOST:PORT]
                        [--state FILE]

      --scenario FILE   scenario JSON (default: the built-in one)      APPLEID_MOCK_SCENARIO
      --host HOST       address to bind (default 127.0.0.1)            APPLEID_MOCK_HOST
      --port PORT       port to bind, 0 for any free one (default 8080) APPLEID_MOCK_PORT
      --keys DIR        directory of <kid>.pem signing keys            APPLEID_MOCK_KEYS
                        (default: the scenario's, Keys/signing)
      --issuer URL      the iss of minted tokens                       APPLEID_MOCK_ISSUER
                        (default https://appleid.apple.com)
      --base-url URL    the address clients reach the mock at, for     APPLEID_MOCK_BASE_URL
                        discovery (default http://HOST:PORT)
      --allowed-host NAMES  comma-separated host names the control API     APPLEID_MOCK_ALLOWED_HOSTS
                        (/__mock) answers besides IP addresses, localhost and
                        the --base-url host, e.g. a Docker service name

      --tls-cert FILE   PEM certificate chain (leaf first): the port      APPLEID_MOCK_TLS_CERT
                        serves HTTPS only, TLS 1.2 and 1.3 (`appleid-mock tls generate`
                        writes one for appleid.apple.com and localhost)
      --tls-key FILE    its PEM private key, unencrypted                   APPLEID_MOCK_TLS_KEY

      --control-token TOKEN  every /__mock route but /__mock/health then  APPLEID_MOCK_CONTROL_TOKEN
                        needs "Authorization: Bearer TOKEN" (401 otherwise; the CLI's
                        --control-token sends it). Apple's routes stay open. Set it whenever
                        the port is reachable from other machines (--host 0.0.0.0, a container);
                        prefer the variable: a flag's value shows in `ps`.

      --notification-ca FILE  PEM CA certificates https notification     APPLEID_MOCK_NOTIFICATION_CA
                        receivers are checked against (default: the system store)
      --notification-timeout SECONDS  how long each notification attempt     APPLEID_MOCK_NOTIFICATION_TIMEOUT
                        waits for the receiver: to connect (at most 5 s) and to answer (SECONDS,
                        1 to 120; default 5 to connect, 10 to answer). An attempt past it
                        fails and is retried (scenario compatibility.notification_retry_delays)

      --log-level LEVEL what goes to stderr, each level adding to the     APPLEID_MOCK_LOG_LEVEL
                        one before: error (failures of the mock itself), warn (notices:
                        key fallback, exposure), info (default: one line per request
                        Apple's endpoints refused, saying why), debug (one line per
                        answered request)

      --seed N          one stream seeded by N for every draw: codes, tokens,  APPLEID_MOCK_SEED
                        ids, kids, keys made at run time, the order of /auth/keys
                        (0 to 18446744073709551615; wins over the scenario's "seed"). With
                        a frozen clock (scenario "clock"), the same requests get the same
                        answers, byte for byte, in every process

      --journal on|off  keep the request journal (default on): every      APPLEID_MOCK_JOURNAL
                        request and its answer, for tests to assert on (GET /__mock/requests,
                        `appleid-mock requests`); the newest 10,000 (scenario "journal")

      --smtp-port PORT  also serve SMTP on PORT (0: any free one), as    APPLEID_MOCK_SMTP_PORT
                        Apple's Private Email Relay: mail to a relay address is forwarded
                        only from a domain or address the team registered (scenario
                        "email_sources"), refused with 550 otherwise or when the user turned
                        forwarding off or deleted the account; other addresses are kept as
                        direct mail. STARTTLS with --tls-cert. Read it with GET /__mock/mail
                        or `appleid-mock mail` (default: no SMTP)
      --mail-forward smtp://HOST:PORT  send forwarded mail (to the real   APPLEID_MOCK_MAIL_FORWARD
                        address) and direct mail on to a catcher such as Mailpit

      --state FILE      keep the state in FILE (SQLite; created when missing)  APPLEID_MOCK_STATE
                        so a restart, even kill -9, changes nothing a backend can see:
                        users added, consents and revocations, codes and redemptions,
                        transfers, signing keys, the clock, the token MAC secret, the --seed
                        stream, undelivered notifications and the log, the event sequence.
                        Every answer is sent after what it depends on is committed. One mock
                        per file; the file belongs to the scenario it was made with.
                        Inspect, save and seed one with `appleid-mock state` (default: memory only)

    SIGINT, SIGTERM and SIGHUP stop it after in-flight requests finish; queued notifications
    get a few seconds more, and any still undelivered are listed on stderr.

    Prints "listening on http://HOST:PORT" (https with TLS) once it accepts connections, and
    with --smtp-port a second line, "smtp on smtp://HOST:PORT".
    """

    static let options: [String: String] = [
        "scenario": "APPLEID_MOCK_SCENARIO", "host": "APPLEID_MOCK_HOST", "port": "APPLEID_MOCK_PORT",
        "keys": "APPLEID_MOCK_KEYS", "issuer": "APPLEID_MOCK_ISSUER", "base-url": "APPLEID_MOCK_BASE_URL",
        "allowed-host": "APPLEID_MOCK_ALLOWED_HOSTS", "notification-ca": "APPLEID_MOCK_NOTIFICATION_CA",
        "notification-timeout": "APPLEID_MOCK_NOTIFICATION_TIMEOUT", "tls-cert": "APPLEID_MOCK_TLS_CERT",
        "tls-key": "APPLEID_MOCK_TLS_KEY", "control-token": "APPLEID_MOCK_CONTROL_TOKEN",
        "log-level": "APPLEID_MOCK_LOG_LEVEL", "seed": "APPLEID_MOCK_SEED", "journal": "APPLEID_MOCK_JOURNAL",
        "smtp-port": "APPLEID_MOCK_SMTP_PORT", "mail-forward": "APPLEID_MOCK_MAIL_FORWARD", "state": "APPLEID_MOCK_STATE",
    ]

    /// Signals that stop the server gracefully (a closing terminal's SIGHUP
    /// drains like SIGTERM instead of cutting requests off).
    static let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2]

    /// Parses options (flags override environment variables), starts, and serves.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        var parsed = try ParsedArguments(arguments, options: Set(options.keys), usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        for (option, variable) in options where parsed.options[option] == nil {
            if let value = environment[variable], !value.isEmpty { parsed.options[option] = value }
        }
        var configuration = AppleIDMockConfiguration()
        if let level = parsed.options["log-level"] {
            guard let parsedLevel = AppleIDMockLogLevel(rawValue: level) else {
                throw UsageError(message: "--log-level expects one of \(AppleIDMockLogLevel.names), got \"\(level)\"", usage: usage)
            }
            configuration.logLevel = parsedLevel
        }
        if let path = parsed.options["scenario"] {
            do {
                configuration.scenario = try Scenario.load(path: path)
            } catch {
                throw CommandFailure(message: "scenario \(path):\n\(error)", status: 2)
            }
        }
        configuration.seed = try parsed.unsigned("seed", usage: usage)
        if let journal = parsed.options["journal"] {
            guard journal == "on" || journal == "off" else { throw UsageError(message: "--journal expects on or off, got \"\(journal)\"", usage: usage) }
            configuration.journal = journal == "on"
        }
        if parsed.options["smtp-port"] != nil {
            configuration.smtpPort = try parsed.integer("smtp-port", default: 2525, range: 0...65535, usage: usage)
        }
        if let target = parsed.options["mail-forward"] {
            guard MailBox.isForwardTarget(target) else {
                throw UsageError(message: "--mail-forward expects smtp://HOST:PORT, got \"\(target)\"", usage: usage)
            }
            guard let smtpPort = configuration.smtpPort else { throw UsageError(message: "--mail-forward needs --smtp-port", usage: usage) }
            // Its own port would send every copy round and round (a loop the hop count ends, but noisily).
            if let (host, port) = MailBox.forwardTarget(target), port == smtpPort,
               ["127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0", parsed.options["host"] ?? "127.0.0.1"].contains(host) {
                throw UsageError(message: "--mail-forward \(target) is this mock's own SMTP port", usage: usage)
            }
            configuration.mailForward = target
        }
        if let state = parsed.options["state"] {
            guard !state.isEmpty else { throw UsageError(message: "--state expects a file path", usage: usage) }
            configuration.statePath = state
        }
        if let host = parsed.options["host"] {
            guard isBindableHost(host) else {
                throw UsageError(message: "--host expects an IPv4 or IPv6 address or localhost, got \"\(host)\"", usage: usage)
            }
            configuration.host = host
        }
        if let names = parsed.options["allowed-host"] {
            let list = names.split(separator: ",").map { String($0.filter { $0 != " " }) }
            guard !list.isEmpty, list.allSatisfy(isHostName) else {
                throw UsageError(message: "--allowed-host expects comma-separated host names, got \"\(names)\"", usage: usage)
            }
            configuration.allowedHosts = list
        }
        configuration.port = try parsed.integer("port", default: 8080, range: 0...65535, usage: usage)
        if let keys = parsed.options["keys"] {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: keys, isDirectory: &isDirectory), isDirectory else {
                throw UsageError(message: "--keys \(keys): no such directory", usage: usage)
            }
            configuration.keysDirectory = keys
        }
        if let ca = parsed.options["notification-ca"] {
            do {
                _ = try BoundedFile.read(ca, limit: 4 * 1024 * 1024)
            } catch {
                throw UsageError(message: "--notification-ca \(ca): \(error.message)", usage: usage)
            }
            configuration.notificationCAFile = ca
        }
        if parsed.options["notification-timeout"] != nil {
            let seconds = try parsed.integer("notification-timeout", default: 10, range: 1...120, usage: usage)
            configuration.notificationConnectTimeout = Double(min(seconds, 5))
            configuration.notificationResponseTimeout = Double(seconds)
        }
        switch (parsed.options["tls-cert"], parsed.options["tls-key"]) {
        case (nil, nil):
            break
        case (let certificate?, let key?):
            configuration.tlsFiles = (certificate, key)
        case (nil, _?):
            throw UsageError(message: "--tls-key needs --tls-cert", usage: usage)
        case (_?, nil):
            throw UsageError(message: "--tls-cert needs --tls-key", usage: usage)
        }
        if let token = parsed.options["control-token"] {
            try ControlClient.checkToken(token, usage: usage)
            configuration.controlToken = token
        }
        if let issuer = parsed.options["issuer"] {
            guard URL(string: issuer)?.scheme != nil else { throw UsageError(message: "--issuer expects an absolute URL, got \"\(issuer)\"", usage: usage) }
            configuration.issuer = issuer
        }
        if let base = parsed.options["base-url"] {
            guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw UsageError(message: "--base-url expects an absolute http(s) URL, got \"\(base)\"", usage: usage)
            }
            configuration.baseURL = base
        }

        // Block the stop signals before any thread exists, so every thread inherits the mask
        // and the signals stay pending until the main thread takes them with sigwait below.
        signal(SIGPIPE, SIG_IGN)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for stop in Self.stopSignals { sigaddset(&stopSignals, stop) }
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let server: AppleIDMockServer
        do {
            server = try AppleIDMockServer.start(configuration)
        } catch {
            switch error {
            case .bind: throw CommandFailure(message: "\(error)", status: 1)
            case .keys, .scenario, .tls, .mailForward, .state: throw CommandFailure(message: "\(error)", status: 2)
            }
        }
        Output.out("listening on \(server.listenURL)")
        if let smtpPort = server.smtpPort {
            let host = server.http.host.contains(":") ? "[\(server.http.host)]" : server.http.host
            Output.out("smtp on smtp://\(host):\(smtpPort)")
        }
        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        server.stop()
        return 0
    }

    /// An address `--host` can bind: an IPv4 or IPv6 literal (bracketed or not) or `localhost`.
    static func isBindableHost(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        var v6 = in6_addr()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// A DNS host name: labels of letters, digits and hyphens (underscores too, as Docker allows).
    static func isHostName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253 && name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
            }
        }
    }
}
