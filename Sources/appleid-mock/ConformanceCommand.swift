import AppleIDMock
import FoundationEssentials
import Glibc
import JOSE
import MiniHTTP

/// `appleid-mock conformance`: sends a fixed set of anonymous probes to Apple (or reads a
/// recording of its answers) and to the mock, and reports where they differ and which scenario
/// knob would model each difference. Exit 0 when all match, 1 on drift, 2 when Apple or the mock
/// could not be reached or the input is bad: nothing compared is not drift.
enum ConformanceCommand {
    static let usage = """
    usage: appleid-mock conformance [--against URL|DIR] [--mock URL | --scenario FILE]
                                    [--report FILE] [--record DIR] [--suggest] [--list]
                                    [--timeout SECONDS]

      --against URL|DIR  what the mock is compared with: Apple (default https://appleid.apple.com),
                         another server, or a directory of recorded answers (--record makes one)
      --mock URL         a running mock to compare (default: one started in this process, on a
                         free loopback port)
      --scenario FILE    the scenario of the mock started in process (default: the built-in one)
      --report FILE      also write the whole comparison as JSON: every part of every probe,
                         both answers whole, the knobs
      --record DIR       write the answers of --against URL to DIR, one JSON file per probe
      --suggest          print the scenario fragment (compatibility knobs and the like) that
                         makes the mock answer as --against did, where knobs model the drift
      --list             print every request the probes send, and what each compares; send nothing
      --timeout SECONDS  give up on a server that takes longer to connect or answer (default 30)

    Every probe is a request any anonymous client could send: no credential, token, cookie or user
    identifier leaves the machine. The one client_secret sent is signed by a P-256 key generated
    for the run and discarded, which no one has registered. Volatile parts (kids, key material,
    dates, request ids) are compared by shape only. The probe set: docs/apple-behaviour.md §13.

    Prints "match" or "differs" per probe; a differing probe shows both answers' parts side by
    side, "*" where they differ, and the knob that models the difference where one exists.
    Exit 0 when every probe matches, 1 when any differs (drift), 2 when --against or the mock
    could not be reached (nothing was compared: not drift) or for bad arguments.
    """

    /// Where Apple answers: the default `--against`.
    static let appleURL = "https://appleid.apple.com"

    /// Parses the options, probes both sides (Apple first), compares, prints; returns the exit status.
    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ["against", "mock", "scenario", "report", "record", "timeout"],
                                         flags: ["suggest", "list"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        let against = parsed.options["against"] ?? appleURL
        let againstURL = isURL(against)
        if againstURL {
            guard checkURL(against) else {
                throw UsageError(message: "--against expects an http(s) URL without a path, query or fragment, or a recording directory, got \"\(against)\"",
                                 usage: usage)
            }
        } else if !BoundedFile.isDirectory(against) {
            throw UsageError(message: "--against \(against): no such directory (expected an http(s) URL or a recording directory)", usage: usage)
        }
        if let mock = parsed.options["mock"], !isURL(mock) || !checkURL(mock) {
            throw UsageError(message: "--mock expects the http(s) URL of a running mock, got \"\(mock)\"", usage: usage)
        }
        if parsed.options["mock"] != nil, parsed.options["scenario"] != nil {
            throw UsageError(message: "--scenario is for the mock started in process; --mock names a running one", usage: usage)
        }
        if parsed.options["record"] != nil, !againstURL {
            throw UsageError(message: "--record needs --against URL: a recording is made from a server", usage: usage)
        }
        for option in ["report", "record"] where parsed.options[option]?.isEmpty == true {
            throw UsageError(message: "--\(option) expects a path", usage: usage)
        }
        var http = HTTPClient()
        let seconds = Double(try parsed.integer("timeout", default: 30, range: 1...3600, usage: usage))
        http.connectTimeout = seconds
        http.responseTimeout = seconds
        http.maxBodyBytes = 1024 * 1024

        if parsed.flags.contains("list") {
            Output.out(list(base: againstURL ? trimmed(against) : appleURL))
            return 0
        }

        // Apple first: when it cannot be reached, nothing is started and nothing compared.
        let appleAnswers: [ConformanceAnswer]
        let appleDescription: String
        if againstURL {
            appleAnswers = try probeAll(base: trimmed(against), http: http, side: "--against")
            appleDescription = trimmed(against)
        } else {
            do {
                appleAnswers = try ConformanceProbe.all.map { probe throws(ConformanceAnswer.RecordingError) in try ConformanceAnswer.read(probe, from: against) }
            } catch {
                throw CommandFailure(message: "--against \(against): \(error)", status: 2)
            }
            appleDescription = "the recording \(against) (of \(appleAnswers.first?.origin ?? "?"))"
        }
        if let directory = parsed.options["record"] {
            try record(appleAnswers, to: directory)
        }

        let mockAnswers: [ConformanceAnswer]
        let mockDescription: String
        if let mock = parsed.options["mock"] {
            mockAnswers = try probeAll(base: trimmed(mock), http: http, side: "--mock")
            mockDescription = "the running mock at \(trimmed(mock))"
        } else {
            let server = try startMock(scenarioPath: parsed.options["scenario"])
            defer { server.stop() }
            mockAnswers = try probeAll(base: server.listenURL, http: http, side: "the mock started in process at")
            mockDescription = "started in process (\(parsed.options["scenario"].map { "scenario \($0)" } ?? "the built-in scenario"))"
        }

        let outcomes = zip(ConformanceProbe.all, zip(withMockOrigin(mockAnswers), appleAnswers)).map { probe, answers in
            ConformanceReport.Outcome(probe: probe, mock: answers.0, apple: answers.1)
        }
        let report = ConformanceReport(mockDescription: mockDescription, appleDescription: appleDescription, outcomes: outcomes)
        if let path = parsed.options["report"] {
            guard FileManager.default.createFile(atPath: path, contents: Data(report.json().utf8)) else {
                throw CommandFailure(message: "--report \(path): cannot write it", status: 2)
            }
        }
        Output.out(report.text(suggest: parsed.flags.contains("suggest")))
        return report.drifted ? 1 : 0
    }

    /// `http://…` or `https://…`, any case.
    private static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// An origin the client can send to, with nothing after it but an optional `/`.
    private static func checkURL(_ text: String) -> Bool {
        guard HTTPClient.isSendable(url: text) else { return false }
        let afterScheme = text.drop { $0 != "/" }.dropFirst(2)
        guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return true }
        return afterScheme[slash...] == "/"
    }

    private static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// Sends every probe to `base`; an exchange that fails ends the run with exit 2.
    private static func probeAll(base: String, http: HTTPClient, side: String) throws -> [ConformanceAnswer] {
        try ConformanceProbe.all.map { probe in
            let body = try probe.bodyToSend { try ConformanceProbe.makeThrowawaySecret(now: Int64(Date().timeIntervalSince1970)) }
            do {
                let response = try http.send(probe.method, url: base + probe.path, headers: probe.headers, body: body)
                return ConformanceAnswer(origin: base, response: response)
            } catch {
                throw CommandFailure(message: "cannot reach \(side) \(base): \(error)\nnothing was compared, so this is not drift (exit 2)", status: 2)
            }
        }
    }

    /// The mock's answers with their origin set to the base URL its discovery document names:
    /// a mock behind a published port or a proxy knows its address better than the URL used.
    private static func withMockOrigin(_ answers: [ConformanceAnswer]) -> [ConformanceAnswer] {
        guard let index = ConformanceProbe.all.firstIndex(where: { $0.kind == .discovery }), answers[index].status == 200,
              case .object(let document)? = try? JSONParser.parse(answers[index].body),
              let endpoint = document["authorization_endpoint"]?.stringValue, endpoint.hasSuffix("/auth/authorize") else { return answers }
        let origin = String(endpoint.dropLast("/auth/authorize".count))
        return answers.map { answer in
            var answer = answer
            answer.origin = origin
            return answer
        }
    }

    /// Starts the mock in process on a free loopback port, its log dropped.
    private static func startMock(scenarioPath: String?) throws -> AppleIDMockServer {
        var configuration = AppleIDMockConfiguration()
        if let scenarioPath {
            do {
                configuration.scenario = try Scenario.load(path: scenarioPath)
            } catch {
                throw CommandFailure(message: "scenario \(scenarioPath):\n\(error)", status: 2)
            }
        }
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.journal = false
        configuration.log = { _ in }
        do {
            return try AppleIDMockServer.start(configuration)
        } catch {
            throw CommandFailure(message: "cannot start the mock: \(error)", status: 2)
        }
    }

    /// Writes one JSON file per probe to `directory` (made when missing).
    private static func record(_ answers: [ConformanceAnswer], to directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(message: "--record \(directory): cannot make the directory: \(error)", status: 2)
        }
        for (probe, answer) in zip(ConformanceProbe.all, answers) {
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + probe.id + ".json"
            guard FileManager.default.createFile(atPath: path, contents: Data(answer.recording(of: probe).utf8)) else {
                throw CommandFailure(message: "--record \(path): cannot write it", status: 2)
            }
        }
    }

    /// Every request, as `--list` prints it.
    static func list(base: String) -> String {
        var lines = [
            "Each probe is sent to \(base) and to the mock, as below; the client adds Host, Content-Length",
            "and Connection: close. No request carries a credential, token, cookie or user identifier.",
        ]
        for probe in ConformanceProbe.all {
            lines.append("")
            lines.append("\(probe.id): \(probe.method) \(base)\(probe.path)")
            lines.append("  guards: apple-behaviour.md \(probe.guards)")
            lines.append("  compares: \(probe.compares)")
            for (name, value) in probe.headers { lines.append("  \(name): \(value)") }
            if probe.method == "POST" {
                let body = probe.body.replacing(ConformanceProbe.throwawaySecret, with: ConformanceProbe.throwawayDescription)
                lines.append("  body: \(body.isEmpty ? "(empty)" : body)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
