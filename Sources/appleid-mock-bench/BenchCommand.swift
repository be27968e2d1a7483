import Foundation
import Glibc

/// Runs every measurement in one go, prints the table and writes the JSON.
enum BenchCommand {
    static func run(_ arguments: [String]) -> Int32 {
        let options: BenchOptions
        do {
            options = try BenchOptions(arguments)
        } catch {
            FileHandle.standardError.write(Data(((error.message.isEmpty ? "" : "appleid-mock-bench: \(error.message)\n") + BenchOptions.usage + "\n").utf8))
            return error.message.isEmpty ? 0 : 2
        }
        raiseDescriptorLimit()
        var report = BenchReport(options: options, cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        do {
            try measure(options, into: &report)
        } catch {
            FileHandle.standardError.write(Data("appleid-mock-bench: \(error)\n".utf8))
            return 1
        }
        print(report.table())
        do {
            try report.json().write(to: URL(fileURLWithPath: options.jsonPath))
            print("figures written to \(options.jsonPath)")
        } catch {
            FileHandle.standardError.write(Data("appleid-mock-bench: cannot write \(options.jsonPath): \(error)\n".utf8))
            return 1
        }
        return report.failures == 0 ? 0 : 1
    }

    private static func measure(_ options: BenchOptions, into report: inout BenchReport) throws {
        let cores = report.cores
        switch options.only {
        case .users?: return try measureUsers(options, into: &report)
        case .scenario?: return try measureScenarioUsers(options, into: &report)
        case .journal?: return try measureJournal(options, into: &report)
        case .mail?: return try measureMail(options, into: &report)
        case .state?: return try measureState(options, into: &report)
        case .dashboard?: return try measureDashboard(options, into: &report)
        case .hardening?: return try measureHardening(options, into: &report)
        case nil: break
        }
        progress("RSA-2048 signing ceiling (openssl speed -multi \(cores))")
        report.signingCeiling = SigningCeiling.measure(cores: cores, seconds: options.signingSeconds)

        progress("cold start x\(options.coldStarts)")
        report.coldStarts = try ColdStart.measure(binary: options.server, runs: options.coldStarts)

        let server = try ServerProcess.startMock(binary: options.server)
        defer { server.stop() }
        let keys = try RawConnection(port: server.port).exchange(RawConnection.keysRequest)
        usleep(300_000)
        report.idleResidentMiB = server.residentMiB

        progress("/auth/keys with wrk, \(options.connections) connections, \(options.duration) s, then nginx on the same bytes")
        report.keys = WrkRun.run(url: "http://127.0.0.1:\(server.port)/auth/keys", connections: options.connections,
                                 threads: cores, seconds: options.duration)
        if report.keys != nil, let nginx = try StaticCeiling.start(body: Array(keys.body), workers: cores) {
            defer { nginx.stop() }
            report.staticCeiling = WrkRun.run(url: "http://127.0.0.1:\(nginx.port)/auth/keys", connections: options.connections,
                                              threads: cores, seconds: options.duration)
        }

        report.tls = try TLSLoad.run(binary: options.server, options: options, cores: cores, progress: progress)

        progress("a new client's latency, then again with \(options.idleConnections) idle keep-alive connections open")
        report.idle = try IdleConnectionProbe.run(server: server, idle: options.idleConnections, probes: options.probes)

        progress("\(options.exchanges) code exchanges in \(options.rounds) rounds, \(options.connections) connections")
        let secret = try clientSecret(options)
        report.exchanges = try ExchangeLoad.run(server: server, secret: secret, total: options.exchanges,
                                                rounds: options.rounds, connections: options.connections, threads: cores)

        try measureJournal(options, secret: secret, into: &report)

        if options.notifications > 0 {
            progress("\(options.notifications) account events, their notifications delivered to a local receiver")
            report.notifications = try NotificationLoad.run(binary: options.server, count: options.notifications, deadline: 300)
        }
        try measureUsers(options, into: &report)
        try measureScenarioUsers(options, into: &report)
        try measureMail(options, into: &report)
        try measureState(options, secret: secret, into: &report)
        try measureDashboard(options, into: &report)
        try measureHardening(options, secret: secret, into: &report)
    }

    /// The hardening rows: what a background job, a slow client or a silent receiver did to the mock.
    private static func measureHardening(_ options: BenchOptions, secret: String? = nil, into report: inout BenchReport) throws {
        report.hardening = try HardeningLoad.run(binary: options.server, secret: try secret ?? clientSecret(options), options: options, progress: progress)
    }

    /// The dashboard row: page loads (shell and data) with many users and a full delivery log.
    private static func measureDashboard(_ options: BenchOptions, into report: inout BenchReport) throws {
        report.dashboard = try DashboardLoad.run(binary: options.server, users: options.dashboardUsers, notifications: options.dashboardNotifications,
                                                 fetches: options.dashboardFetches, progress: progress)
    }

    /// The state file's rows: code exchanges and `/auth/keys` with `--state` against none, idle memory.
    private static func measureState(_ options: BenchOptions, secret: String? = nil, into report: inout BenchReport) throws {
        report.state = try StateLoad.run(binary: options.server, secret: try secret ?? clientSecret(options), options: options, cores: report.cores,
                                         exchanges: options.smoke ? 2000 : 20_000, progress: progress)
    }

    /// The SMTP rows: messages accepted per second, the mailbox's memory, `/auth/keys` beside it.
    private static func measureMail(_ options: BenchOptions, into report: inout BenchReport) throws {
        report.mail = try MailLoad.run(binary: options.server, options: options, cores: report.cores, progress: progress)
    }

    /// The journal's rows: `/auth/keys` and code exchanges on against `--journal off`, and its memory.
    private static func measureJournal(_ options: BenchOptions, secret: String? = nil, into report: inout BenchReport) throws {
        report.journal = try JournalLoad.run(binary: options.server, secret: try secret ?? clientSecret(options), options: options, cores: report.cores,
                                             exchanges: options.smoke ? 2000 : 20_000, journaled: options.smoke ? 20_000 : 200_000,
                                             progress: progress)
    }

    /// The sub-lookup row: account events and `/auth/token` p99 with many users against 10.
    private static func measureUsers(_ options: BenchOptions, into report: inout BenchReport) throws {
        guard options.users > 0 else { return }
        report.userLookups = try UserLookupLoad.run(binary: options.server, secret: try clientSecret(options), users: options.users,
                                                    events: options.userEvents, exchanges: options.userExchanges,
                                                    connections: min(options.connections, 8), threads: report.cores, progress: progress)
    }

    /// The scenario-file rows: start, credential state and sign-in by sub with many users against 3.
    private static func measureScenarioUsers(_ options: BenchOptions, into report: inout BenchReport) throws {
        guard options.scenarioUsers > 0 else { return }
        report.scenarioUsers = try ScenarioUsersLoad.run(binary: options.server, users: options.scenarioUsers, lookups: options.scenarioLookups,
                                                         secret: try clientSecret(options, client: "com.example.app"), progress: progress)
    }

    /// A client_secret for the web client, a day long.
    private static func clientSecret(_ options: BenchOptions, client: String = "com.example.web") throws -> String {
        guard let secret = Tool.run(options.server, ["client-secret", "--client", client, "--lifetime", "86400"])?
            .trimmingCharacters(in: .whitespacesAndNewlines), !secret.isEmpty else {
            throw ServerProcess.Failure(description: "`appleid-mock client-secret` failed (run from the repository root, where Keys/ is)")
        }
        return secret
    }

    private static func progress(_ text: String) {
        FileHandle.standardError.write(Data("… \(text)\n".utf8))
    }

    /// The idle-connection probe holds over a thousand sockets.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
