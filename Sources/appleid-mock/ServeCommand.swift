import AppleIDMock
import FoundationEssentials
import Glibc

/// `appleid-mock serve`: runs the server until SIGINT or SIGTERM, then exits 0.
enum ServeCommand {
    static let usage = """
    usage: appleid-mock [serve] [--scenario FILE] [--host HOST] [--port PORT] [--keys DIR]
                        [--issuer URL] [--base-url URL]

      --scenario FILE   scenario JSON (default: the built-in one)      APPLEID_MOCK_SCENARIO
      --host HOST       address to bind (default 127.0.0.1)            APPLEID_MOCK_HOST
      --port PORT       port to bind, 0 for any free one (default 8080) APPLEID_MOCK_PORT
      --keys DIR        directory of <kid>.pem signing keys            APPLEID_MOCK_KEYS
                        (default: the scenario's, Keys/signing)
      --issuer URL      the iss of minted tokens                       APPLEID_MOCK_ISSUER
                        (default https://appleid.apple.com)
      --base-url URL    the address clients reach the mock at, for     APPLEID_MOCK_BASE_URL
                        discovery (default http://HOST:PORT)

    Prints exactly one line, "listening on http://HOST:PORT", once it accepts connections.
    """

    static let options: [String: String] = [
        "scenario": "APPLEID_MOCK_SCENARIO", "host": "APPLEID_MOCK_HOST", "port": "APPLEID_MOCK_PORT",
        "keys": "APPLEID_MOCK_KEYS", "issuer": "APPLEID_MOCK_ISSUER", "base-url": "APPLEID_MOCK_BASE_URL",
    ]

    /// Parses options (flags override environment variables), starts, and serves.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        var parsed = try ParsedArguments(arguments, options: Set(options.keys), usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        for (option, variable) in options where parsed.options[option] == nil {
            if let value = environment[variable], !value.isEmpty { parsed.options[option] = value }
        }
        var configuration = AppleIDMockConfiguration()
        if let path = parsed.options["scenario"] {
            do {
                configuration.scenario = try Scenario.load(path: path)
            } catch {
                throw CommandFailure(message: "scenario \(path):\n\(error)", status: 2)
            }
        }
        configuration.host = parsed.options["host"] ?? configuration.host
        configuration.port = try parsed.integer("port", default: 8080, range: 0...65535, usage: usage)
        if let keys = parsed.options["keys"] {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: keys, isDirectory: &isDirectory), isDirectory else {
                throw UsageError(message: "--keys \(keys): no such directory", usage: usage)
            }
            configuration.keysDirectory = keys
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

        // Block SIGINT and SIGTERM before any thread exists, so every thread inherits the mask
        // and the signals stay pending until the main thread takes them with sigwait below.
        signal(SIGPIPE, SIG_IGN)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let server: AppleIDMockServer
        do {
            server = try AppleIDMockServer.start(configuration)
        } catch {
            switch error {
            case .bind: throw CommandFailure(message: "\(error)", status: 1)
            case .keys, .scenario: throw CommandFailure(message: "\(error)", status: 2)
            }
        }
        Output.out("listening on \(server.listenURL)")
        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        server.shutdown()
        server.waitUntilStopped()
        return 0
    }
}
