import AppleIDMock
import Dispatch
import FoundationEssentials
import Glibc
import JOSE
import MiniHTTP
import Synchronization

/// `appleid-mock notifications listen`: a receiver for the mock's server-to-server
/// notifications that verifies each one against the running mock and prints it, so nobody has
/// to write one to see one.
enum NotificationsCommand {
    /// The command's help.
    static let usage = """
    usage: appleid-mock notifications listen [--port PORT] [--host HOST] [--path PATH]
                                             [--client-id ID] [--issuer URL] [--count N] [--json]
                                             [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]

      --port PORT        port to listen on, 0 for any free one (default 9000)
      --host HOST        address to bind (default 127.0.0.1)
      --path PATH        accept POST on this path only (default: any path)
      --client-id ID     the aud every notification must carry (default: any client id)
      --issuer URL       the iss expected (default https://appleid.apple.com)  APPLEID_MOCK_ISSUER
      --count N          exit 0 after N verified notifications (default: run until stopped)
      --json             print one JSON object a line instead of text
    \(ControlClient.optionsUsage)

    Receives POST {"payload": "<JWT>"} as Apple sends it (point a scenario's notification_url
    here). Each JWT is checked: RS256 under a key the mock at --server publishes at /auth/keys
    (fetched again for an unknown kid), iss, aud, iat and exp against the mock's own clock
    (GET /__mock/clock, as it may have been moved), and the events claim (a JSON-encoded string
    or an object). Prints "listening on http://HOST:PORT" first, then one line a notification:

      consent-revoked sub=001234.… aud=com.example.app event_time=… verified kid=W2ek7HdPaL

    answered 200; or "REJECTED <reason>", answered 400, so the mock logs the attempt and retries.
    SIGINT and SIGTERM stop it (exit 0).
    """

    /// Options `listen` takes (besides the control client's).
    static let options: Set<String> = ["port", "host", "path", "client-id", "issuer", "count"]

    /// Runs `notifications listen …`.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        guard let subcommand = arguments.first, !subcommand.hasPrefix("-") else {
            if arguments.first == "--help" || arguments.first == "-h" { throw HelpRequested(usage: usage) }
            throw UsageError(message: "missing subcommand (listen)", usage: usage)
        }
        guard subcommand == "listen" else { throw UsageError(message: "unknown notifications command \"\(subcommand)\"", usage: usage) }
        let parsed = try ParsedArguments(Array(arguments.dropFirst()), options: options.union(ControlClient.options), flags: ["json"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        var configuration = HTTPServerConfiguration()
        configuration.port = try parsed.integer("port", default: 9000, range: 0...65535, usage: usage)
        if let host = parsed.options["host"] {
            guard ServeCommand.isBindableHost(host) else {
                throw UsageError(message: "--host expects an IPv4 or IPv6 address or localhost, got \"\(host)\"", usage: usage)
            }
            configuration.host = host
        }
        configuration.eventLoopCount = 1
        configuration.maxConnections = 256
        configuration.limits.maxBodyBytes = NotificationVerifier.maxBodyBytes
        let path = parsed.options["path"]
        if let path {
            guard path.hasPrefix("/"), path.utf8.count <= 1024, !path.contains("?"), path.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                throw UsageError(message: "--path expects an absolute path such as /apple/notifications, got \"\(path)\"", usage: usage)
            }
        }
        let clientID = parsed.options["client-id"]
        if let clientID, clientID.isEmpty || clientID.utf8.count > 255 {
            throw UsageError(message: "--client-id expects a client id, got \"\(clientID)\"", usage: usage)
        }
        let issuer = parsed.options["issuer"] ?? environment["APPLEID_MOCK_ISSUER"].flatMap { $0.isEmpty ? nil : $0 } ?? "https://appleid.apple.com"
        guard issuer.utf8.count <= 1024, URL(string: issuer)?.scheme != nil else {
            throw UsageError(message: "--issuer expects an absolute URL, got \"\(issuer)\"", usage: usage)
        }
        let count: Int? = parsed.options["count"] == nil ? nil : try parsed.integer("count", default: 1, range: 1...1_000_000, usage: usage)
        let verifier = NotificationVerifier(mock: try ControlClient(parsed, environment: environment, usage: usage), issuer: issuer, clientID: clientID)
        let printer = NotificationPrinter(json: parsed.flags.contains("json"), count: count)

        // Verification fetches from the mock and so blocks: it runs on one serial queue, off the
        // cooperative pool, which also keeps the printed lines whole and in arrival order.
        let queue = DispatchQueue(label: "appleid-mock.notifications")
        let receive: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            guard request.method == .post else {
                var response = HTTPResponse.plainError(.methodNotAllowed)
                response.headers.add("Allow", "POST")
                return response
            }
            return await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: printer.answer(verifier, request.body)) }
            }
        }
        var router = Router()
        if let path { router.add(.post, path, deferred: receive) } else { router.setNotFound(.deferred(receive)) }

        signal(SIGPIPE, SIG_IGN)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for stop in [SIGINT, SIGTERM] { sigaddset(&stopSignals, stop) }
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let server: HTTPServer
        do {
            server = try HTTPServer.start(configuration: configuration, routes: router.build())
        } catch {
            throw CommandFailure(message: "cannot listen on \(error.address ?? "\(configuration.host):\(configuration.port)"): \(error.reason)", status: 1)
        }
        Output.out("listening on \(server.url)")
        // A stop signal, or the count reached: whichever comes first.
        LoopThread.start(name: "signals") { [stopSignals] in
            var signals = stopSignals
            var received: Int32 = 0
            sigwait(&signals, &received)
            printer.done.signal()
        }
        printer.done.wait()
        // In-flight answers (the last counted one's 200 included) are written before the loops end.
        server.stop()
        return 0
    }
}
