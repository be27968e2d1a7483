/// How long a new client waits for `/auth/keys` (connect, request, full answer), before and
/// while `idle` other keep-alive connections sit open on the server.
struct IdleConnectionProbe {
    /// Median and 99th percentile latency in ms with no other connection open.
    var unloadedP50: Double
    var unloadedP99: Double
    /// The same with the idle connections open.
    var loadedP50: Double
    var loadedP99: Double
    /// Connections the server held open during the loaded probe (descriptors counted).
    var serverDescriptors: Int

    static func run(server: ServerProcess, idle: Int, probes: Int) throws -> IdleConnectionProbe {
        _ = try sample(port: server.port, count: probes) // warm up
        let unloaded = Percentiles(try sample(port: server.port, count: probes))
        var held: [RawConnection] = []
        held.reserveCapacity(idle)
        for _ in 0..<idle {
            let connection = try RawConnection(port: server.port)
            _ = try connection.exchange(RawConnection.keysRequest)
            held.append(connection)
        }
        let descriptors = server.openDescriptors
        let loaded = Percentiles(try sample(port: server.port, count: probes))
        withExtendedLifetime(held) {}
        return IdleConnectionProbe(unloadedP50: unloaded.median, unloadedP99: unloaded.value(0.99),
                                   loadedP50: loaded.median, loadedP99: loaded.value(0.99), serverDescriptors: descriptors)
    }

    private static func sample(port: Int, count: Int) throws -> [Double] {
        try (0..<count).map { _ in
            let start = Stopwatch.now()
            let answer = try RawConnection(port: port).exchange(RawConnection.keysRequest)
            guard answer.status == 200 else { throw ServerProcess.Failure(description: "/auth/keys answered \(answer.status)") }
            return Stopwatch.milliseconds(since: start)
        }
    }
}
