/// Process start to the first complete `/auth/keys` answer on a fresh connection.
enum ColdStart {
    /// Milliseconds for each of `runs` cold starts of `binary`.
    static func measure(binary: String, runs: Int) throws -> [Double] {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = Stopwatch.now()
            let server = try ServerProcess.startMock(binary: binary)
            defer { server.stop() }
            let answer = try RawConnection(port: server.port).exchange(RawConnection.keysRequest)
            times.append(Stopwatch.milliseconds(since: start))
            guard answer.status == 200 else { throw ServerProcess.Failure(description: "/auth/keys answered \(answer.status)") }
        }
        return times
    }
}
