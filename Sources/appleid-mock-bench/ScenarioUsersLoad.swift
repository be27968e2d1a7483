import Foundation

/// A scenario file of many users (load tests sign that many up) against the built-in scenario's
/// three: how long `serve --scenario` takes to its first answer, then lookups one after another on
/// one connection, each timed — `GET /__mock/credential-state` by `sub` and `POST /__mock/sign-in`
/// (by id: what a native sign-in names) of the user listed last. With indexes, both match the
/// small scenario's.
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
        /// Requests that did not answer as expected.
        var failures: Int
    }

    /// The built-in scenario, and the one with many users.
    let few: Run
    let many: Run

    /// p99 with many users over p99 with the built-in three (the target is at most 2).
    var statedRatio: Double { few.statedP99 > 0 ? many.statedP99 / few.statedP99 : .infinity }
    var signInRatio: Double { few.signInP99 > 0 ? many.signInP99 / few.signInP99 : .infinity }

    /// Runs both: a scenario with `users` users added to the built-in one, and the built-in one;
    /// `lookups` of each kind on each.
    static func run(binary: String, users: Int, lookups: Int, progress: (String) -> Void) throws -> ScenarioUsersLoad {
        let directory = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        progress("a scenario of \(users) users: start, then \(lookups) credential states by sub and \(lookups) sign-ins of the last user; the same with 3 users")
        let small = try scenario(binary: binary, users: 0, path: directory + "/few.json")
        let large = try scenario(binary: binary, users: users, path: directory + "/many.json")
        return ScenarioUsersLoad(few: try measure(binary: binary, scenario: small, lookups: lookups),
                                 many: try measure(binary: binary, scenario: large, lookups: lookups))
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
        let data = try JSONSerialization.data(withJSONObject: scenario)
        try data.write(to: URL(fileURLWithPath: path))
        return (path, users > 0 ? "s\(users - 1)" : "carol", builtIn + users, data.count)
    }

    private static func measure(binary: String, scenario: (path: String, last: String, count: Int, bytes: Int), lookups: Int) throws -> Run {
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
        return Run(users: scenario.count, fileBytes: scenario.bytes, startSeconds: startSeconds, statedP50: state.median,
                   statedP99: state.value(0.99), signInP50: sign.median, signInP99: sign.value(0.99), failures: failures)
    }
}
