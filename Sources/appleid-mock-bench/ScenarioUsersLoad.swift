import Foundation

/// A scenario file of many users (load tests sign that many up) against the built-in scenario's
/// three: how long `serve --scenario` takes to its first answer, then lookups one after another on
/// one connection, each timed — `GET /__mock/credential-state` by `sub` and `POST /__mock/sign-in`
/// (by id: what a native sign-in names) of the user listed last. Then every user signs in on the
/// web (a consent each) and is transferred to a second team (`/auth/usermigrationinfo`), and the
/// same lookups run again: every grant reads the user's live transfers, credential state their
/// transfers and consents. With indexes, all match the small scenario's.
struct ScenarioUsersLoad {
    /// One mock's figures.
    struct Run {
        /// Users in the scenario.
        var users: Int
        /// The scenario file's size, bytes.
        var fileBytes: Int
        /// Seconds from starting the process to its first answer (the scenario read, checked and served).
        var startSeconds: Double
        /// Credential-state lookups by `sub`, milliseconds.
        var statedP50: Double
        var statedP99: Double
        /// Native sign-ins of the last user, milliseconds.
        var signInP50: Double
        var signInP99: Double
        /// The same once every user has a consent and a transfer to the second team.
        var transferredStatedP50 = 0.0
        var transferredStatedP99 = 0.0
        var transferredSignInP50 = 0.0
        var transferredSignInP99 = 0.0
        /// Resident memory idle after start, and the most while `GET /__mock/users` was read
        /// page by page, MiB; the pages read.
        var listIdleMiB = 0.0
        var listPeakMiB = 0.0
        var listPages = 0
        /// Requests that did not answer as expected.
        var failures: Int
    }

    /// The built-in scenario, and the one with many users.
    let few: Run
    let many: Run

    /// p99 with many users over p99 with the built-in three (the target is at most 2).
    var statedRatio: Double { few.statedP99 > 0 ? many.statedP99 / few.statedP99 : .infinity }
    var signInRatio: Double { few.signInP99 > 0 ? many.signInP99 / few.signInP99 : .infinity }
    var transferredStatedRatio: Double { few.transferredStatedP99 > 0 ? many.transferredStatedP99 / few.transferredStatedP99 : .infinity }
    var transferredSignInRatio: Double { few.transferredSignInP99 > 0 ? many.transferredSignInP99 / few.transferredSignInP99 : .infinity }

    /// Runs both: a scenario with `users` users added to the built-in one, and the built-in one;
    /// `lookups` of each kind on each.
    static func run(binary: String, users: Int, lookups: Int, secret: String, progress: (String) -> Void) throws -> ScenarioUsersLoad {
        let directory = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        progress("a scenario of \(users) users: start, then \(lookups) credential states by sub and \(lookups) sign-ins of the last user, "
                 + "again once every user has a consent and a transfer; the same with 3 users")
        let small = try scenario(binary: binary, users: 0, path: directory + "/few.json")
        let large = try scenario(binary: binary, users: users, path: directory + "/many.json")
        return ScenarioUsersLoad(few: try measure(binary: binary, scenario: small, lookups: lookups, secret: secret),
                                 many: try measure(binary: binary, scenario: large, lookups: lookups, secret: secret))
    }

    /// Writes the built-in scenario plus `users` users (ids `s0`…, every other one hiding its
    /// email), compact as a generator would; returns the path, the user to look up and the size.
    private static func scenario(binary: String, users: Int, path: String) throws -> (path: String, last: String, count: Int, bytes: Int) {
        guard let printed = Tool.run(binary, ["scenario", "print"]),
              var scenario = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any],
              var list = scenario["users"] as? [[String: Any]] else {
            throw ServerProcess.Failure(description: "`appleid-mock scenario print` failed")
        }
        let builtIn = list.count
        list += (0..<users).map { index in
            ["id": "s\(index)", "email": "s\(index)@example.com", "given_name": "S", "family_name": "\(index)", "hide_email": index % 2 == 0]
        }
        scenario["users"] = list
        // The team transfers go to: the first team's key, its own ids.
        if var teams = scenario["teams"] as? [[String: Any]], var second = teams.first {
            second["team_id"] = secondTeam
            second["developer_keys"] = (second["developer_keys"] as? [[String: Any]])?.map { key in key.merging(["key_id": "MOCKKEY002"]) { $1 } }
            second["clients"] = [["client_id": "com.example.second", "type": "app_id"]]
            teams.append(second)
            scenario["teams"] = teams
        }
        let data = try JSONSerialization.data(withJSONObject: scenario)
        try data.write(to: URL(fileURLWithPath: path))
        return (path, list.last?["id"] as? String ?? "alice", builtIn + users, data.count)
    }

    private static let secondTeam = "MOCKTEAM02"

    private static func measure(binary: String, scenario: (path: String, last: String, count: Int, bytes: Int), lookups: Int,
                                secret: String) throws -> Run {
        let started = Stopwatch.now()
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--scenario", scenario.path])
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        guard try connection.exchange(RawConnection.healthRequest).status == 200 else {
            throw ServerProcess.Failure(description: "the mock of \(scenario.count) users did not answer its health check")
        }
        let startSeconds = Double(Stopwatch.now() - started) / 1e9
        let first = try connection.exchange(NotificationLoad.request("/__mock/sign-in", #"{"user":"\#(scenario.last)","client_id":"com.example.app"}"#))
        guard first.status == 200, let answer = try? JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any],
              let sub = answer["user"] as? String else {
            throw ServerProcess.Failure(description: "native sign-in of \(scenario.last) answered \(first.status)")
        }
        var failures = 0
        var stated: [Double] = []
        let stateRequest = Array("GET /__mock/credential-state?user=\(sub)&client_id=com.example.app HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        for _ in 0..<lookups {
            let begin = Stopwatch.now()
            if (try? connection.exchange(stateRequest).status) != 200 { failures += 1 }
            stated.append(Double(Stopwatch.now() - begin) / 1e6)
        }
        var signIns: [Double] = []
        let signIn = NotificationLoad.request("/__mock/sign-in", #"{"user":"\#(scenario.last)","client_id":"com.example.app"}"#)
        for _ in 0..<lookups {
            let begin = Stopwatch.now()
            if (try? connection.exchange(signIn).status) != 200 { failures += 1 }
            signIns.append(Double(Stopwatch.now() - begin) / 1e6)
        }
        let (state, sign) = (Percentiles(stated), Percentiles(signIns))
        var run = Run(users: scenario.count, fileBytes: scenario.bytes, startSeconds: startSeconds, statedP50: state.median,
                      statedP99: state.value(0.99), signInP50: sign.median, signInP99: sign.value(0.99), failures: failures)
        // Every user listed, a page at a time: the server's memory stays that of one page.
        run.listIdleMiB = server.residentMiB
        run.listPeakMiB = run.listIdleMiB
        let listed = try UsersPages.all(connection) { _ in
            run.listPages += 1
            run.listPeakMiB = max(run.listPeakMiB, server.residentMiB)
        }
        if listed.count != scenario.count { run.failures += 1 }
        run.failures += try transferEveryone(port: server.port, connection: connection, secret: secret)
        stated = []
        signIns = []
        for _ in 0..<lookups {
            var begin = Stopwatch.now()
            if (try? connection.exchange(stateRequest).status) != 200 { run.failures += 1 }
            stated.append(Double(Stopwatch.now() - begin) / 1e6)
            begin = Stopwatch.now()
            if (try? connection.exchange(signIn).status) != 200 { run.failures += 1 }
            signIns.append(Double(Stopwatch.now() - begin) / 1e6)
        }
        let (transferredState, transferredSign) = (Percentiles(stated), Percentiles(signIns))
        run.transferredStatedP50 = transferredState.median
        run.transferredStatedP99 = transferredState.value(0.99)
        run.transferredSignInP50 = transferredSign.median
        run.transferredSignInP99 = transferredSign.value(0.99)
        return run
    }

    /// Every user signs in on the web (a consent in the first team, no signature: the code is not
    /// redeemed) and is transferred to the second team; returns the requests that failed.
    private static func transferEveryone(port: Int, connection: RawConnection, secret: String) throws -> Int {
        let users = try UsersPages.all(connection)
        let people: [(id: String, sub: String)] = users.compactMap { user in
            guard let id = user["id"] as? String, let teams = user["teams"] as? [[String: Any]],
                  let sub = teams.first(where: { $0["team_id"] as? String == "MOCKTEAM01" })?["sub"] as? String else { return nil }
            return (id, sub)
        }
        let clients = try (0..<4).map { _ in try RawConnection(port: port) }
        var failures = people.count == users.count ? 0 : 1
        // The codes are never redeemed: the mock holds at most 100,000, so the clock moves past
        // their five minutes after each 40,000 (they expire; the consents stay).
        for chunk in stride(from: 0, to: people.count, by: 40_000) {
            let part = people[chunk..<min(chunk + 40_000, people.count)]
            failures += LoadDriver.run(clients, threads: 2) { index in
                LoadDriver.Script(requests: stride(from: part.startIndex + index, to: part.endIndex, by: clients.count).map { at in
                    NotificationLoad.request("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","#
                        + #""response_type":"code","response_mode":"form_post","user":"\#(people[at].id)"}"#)
                }) { _, status, _, _ in status == 200 }
            }
            if try connection.exchange(NotificationLoad.request("/__mock/clock", #"{"advance":301}"#)).status != 200 { failures += 1 }
        }
        let form = "grant_type=client_credentials&scope=user.migration&client_id=com.example.app&client_secret=\(secret)"
        let token = try connection.exchange(formRequest("/auth/token", form))
        guard token.status == 200, let access = (try? JSONSerialization.jsonObject(with: Data(token.body)) as? [String: Any])?["access_token"] as? String else {
            throw ServerProcess.Failure(description: "client_credentials answered \(token.status)")
        }
        return failures + LoadDriver.run(clients, threads: 2) { index in
            LoadDriver.Script(requests: stride(from: index, to: people.count, by: clients.count).map { at in
                formRequest("/auth/usermigrationinfo", "client_id=com.example.app&client_secret=\(secret)&sub=\(people[at].sub)&target=\(secondTeam)",
                            bearer: access)
            }) { _, status, _, _ in status == 200 }
        }
    }

    private static func formRequest(_ path: String, _ body: String, bearer: String? = nil) -> [UInt8] {
        Array(("POST \(path) HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\n"
               + (bearer.map { "Authorization: Bearer \($0)\r\n" } ?? "") + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)
    }
}
