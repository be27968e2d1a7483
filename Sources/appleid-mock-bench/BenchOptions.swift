import Foundation

/// What to measure and how hard.
struct BenchOptions {
    static let usage = """
    usage: appleid-mock-bench [--server PATH] [--smoke] [--json PATH] [--connections N] [--duration S]
                              [--exchanges N] [--rounds N] [--cold-starts N] [--idle N] [--notifications N]
                              [--users N] [--scenario-users N] [--only users|scenario|journal|mail|state|dashboard|hardening]

      --server PATH      the appleid-mock binary to measure (default: next to this one)
      --smoke            a short run that checks every part works (CI); figures are indicative
      --json PATH        where to write the figures as JSON (default bench-results.json)
      --connections N    keep-alive connections for /auth/keys and /auth/token (default 50)
      --duration S       seconds of load per /auth/keys run, ours and nginx's (default 10)
      --exchanges N      code exchanges in all (default 100000)
      --rounds N         the exchanges come in N rounds, memory read after each (default 100)
      --notifications N  account events whose notifications a local receiver awaits, in two batches
                         (default 100000: the first and last 10000 are timed against each other)
      --users N          users loaded for the sub-lookup row, against 10 (default 100000, 0 skips it)
      --scenario-users N users of a scenario file, against the built-in 3: start, credential state by sub
                         and native sign-in of the last user (default 100000, 0 skips it)
      --only users       measure only the sub-lookup row
      --only scenario    measure only the scenario-users rows
      --only journal     measure only the journal's rows (on against --journal off)
      --only mail        measure only the SMTP rows (messages/s, the mailbox's memory, /auth/keys beside it)
      --only state       measure only the --state rows (code exchanges and /auth/keys against none, idle memory)
      --only dashboard   measure only the dashboard row (page loads with 1,000 users and 10,000 notifications logged)
      --only hardening   measure only the hardening rows: --state compaction under 60,000 unredeemed codes (health,
                         SIGTERM), /auth/token beside 8 trickling SMTP sessions, journal reads of 60 KB forms,
                         80,000 events to a receiver that never answers
      --cold-starts N    cold starts to take the median of (default 10)
      --idle N           idle keep-alive connections held open for the latency probe (default 1000)

    Run it from the repository root so the mock finds Keys/. wrk, nginx and openssl are used
    when installed; a missing one leaves its figure out.
    """

    var server: String
    var smoke = false
    var jsonPath = "bench-results.json"
    var connections = 50
    var duration = 10
    var exchanges = 100_000
    var rounds = 100
    var coldStarts = 10
    var idleConnections = 1000
    var notifications = 100_000
    /// Users loaded for the sub-lookup row (0: skipped), and its events and exchanges per mock.
    var users = 100_000
    var userEvents = 10_000
    var userExchanges = 10_000
    /// Users of the scenario-file row (0: skipped), and its lookups of each kind per mock.
    var scenarioUsers = 99_997
    var scenarioLookups = 2000
    /// Measure only one part (`--only users|journal`); nil measures everything.
    var only: Part?
    /// What `--only` can name.
    enum Part: String, CaseIterable { case users, scenario, journal, mail, state, dashboard, hardening }
    /// Whether the run measures everything, not one part.
    var measuresAll: Bool { only == nil }
    /// The dashboard row: runtime users, notifications in the log, timed page loads.
    var dashboardUsers = 1000
    var dashboardNotifications = 10_000
    var dashboardFetches = 50
    /// Seconds `openssl speed` signs for.
    var signingSeconds = 5
    /// New connections the latency probe makes, unloaded and loaded.
    var probes = 400

    /// Bad command line; exit code 2.
    struct Invalid: Error {
        let message: String
    }

    init(_ arguments: [String]) throws(Invalid) {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        server = own.appendingPathComponent("appleid-mock").path
        var rest = arguments[...]
        func value(_ name: String) throws(Invalid) -> String {
            guard let next = rest.popFirst() else { throw Invalid(message: "\(name) needs a value") }
            return next
        }
        func count(_ name: String, _ range: ClosedRange<Int>) throws(Invalid) -> Int {
            let text = try value(name)
            guard let number = Int(text), range.contains(number) else {
                throw Invalid(message: "\(name) expects a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
            }
            return number
        }
        var explicit: Set<String> = []
        while let argument = rest.popFirst() {
            explicit.insert(argument)
            switch argument {
            case "--server": server = try value(argument)
            case "--smoke": smoke = true
            case "--json": jsonPath = try value(argument)
            case "--connections": connections = try count(argument, 1...10_000)
            case "--duration": duration = try count(argument, 1...3600)
            case "--exchanges": exchanges = try count(argument, 1...100_000_000)
            case "--rounds": rounds = try count(argument, 1...1000)
            case "--cold-starts": coldStarts = try count(argument, 1...1000)
            case "--idle": idleConnections = try count(argument, 0...100_000)
            case "--notifications": notifications = try count(argument, 0...1_000_000)
            case "--users": users = try count(argument, 0...100_000)
            // Beside the built-in three: 99,997 makes the 100,000 the mock holds.
            case "--scenario-users": scenarioUsers = try count(argument, 0...99_997)
            case "--only":
                let name = try value(argument)
                guard let part = Part(rawValue: name) else {
                    throw Invalid(message: "--only takes \"users\", \"scenario\", \"journal\", \"mail\", \"state\", \"dashboard\" or \"hardening\", got \"\(name)\"")
                }
                only = part
            case "--help", "-h": throw Invalid(message: "")
            default: throw Invalid(message: "unknown option \"\(argument)\"")
            }
        }
        if smoke {
            if !explicit.contains("--duration") { duration = 2 }
            if !explicit.contains("--exchanges") { exchanges = 4000 }
            if !explicit.contains("--rounds") { rounds = 10 }
            if !explicit.contains("--cold-starts") { coldStarts = 3 }
            if !explicit.contains("--notifications") { notifications = 100 }
            if !explicit.contains("--users") { users = 1000 }
            if !explicit.contains("--scenario-users") { scenarioUsers = 2000 }
            scenarioLookups = 100
            userEvents = 500
            userExchanges = 400
            dashboardUsers = 100
            dashboardNotifications = 500
            dashboardFetches = 10
            signingSeconds = 1
            probes = 50
        }
        guard exchanges >= rounds else { throw Invalid(message: "--exchanges must be at least --rounds") }
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw Invalid(message: "no appleid-mock binary at \(server) (build it, or pass --server)")
        }
    }
}
