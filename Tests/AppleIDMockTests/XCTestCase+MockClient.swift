import AppleIDMock
import XCTest

extension XCTestCase {
    /// The mock of `adjust` (on top of what `startMock` and `inMemoryMock` configure) in `mode`,
    /// in memory unless asked; stopped in a teardown block, so a test that throws leaks nothing.
    func startClient(_ mode: MockMode = .inMemory, _ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> any MockClient {
        let client: any MockClient
        switch mode {
        case .inMemory: client = InMemoryClient(mock: try inMemoryMock(adjust))
        case .live: client = LiveClient(server: try startMock(adjust))
        }
        addTeardownBlock { await client.stop() }
        return client
    }

    /// `startClient` with the clock frozen at `frozenNow`, then `adjust`.
    func frozenClient(_ mode: MockMode = .inMemory, _ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> any MockClient {
        try startClient(mode) { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            adjust(&configuration)
        }
    }

    /// A live mock frozen at `frozenNow`, for the tests of what the wire does (`.server` gives
    /// its port and raw-socket clients); stopped in a teardown block.
    func liveFrozenClient(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> LiveClient {
        let client = LiveClient(server: try startFrozenMock(adjust))
        addTeardownBlock { await client.stop() }
        return client
    }
}
