import MiniHTTP

extension HTTPServerConfiguration {
    /// Loopback, an ephemeral port, two loops, and timeouts short enough for tests to watch.
    public static func testing(timeouts seconds: Double = 0.5) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopCount = 2
        configuration.limits.headerTimeout = seconds
        configuration.limits.requestTimeout = seconds * 2
        configuration.limits.idleTimeout = seconds
        configuration.limits.writeTimeout = seconds
        configuration.shutdownGrace = 5
        return configuration
    }
}
