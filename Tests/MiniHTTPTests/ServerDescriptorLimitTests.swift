import Glibc
@testable import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Connections are capped below the open-file limit, so clients cannot take the descriptors the
/// process needs for itself (probe F1).
final class ServerDescriptorLimitTests: XCTestCase {
    func testMaxConnections_StaysBelowDescriptorLimit() throws {
        let server = try ServerFixture.start()
        defer { server.stop() }
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let soft = Int(clamping: limit.rlim_cur)
        XCTAssertLessThan(server.maxConnections, soft)
        XCTAssertLessThanOrEqual(server.maxConnections, server.configuration.maxConnections)
        XCTAssertLessThanOrEqual(server.maxConnections, soft - 32 - 2 * server.configuration.eventLoopCount)
    }

    func testMaxConnections_IsConfiguredValue_WhenFarBelowDescriptorLimit() throws {
        var configuration = ServerFixture.relaxed
        configuration.maxConnections = 10
        let server = try ServerFixture.start(configuration)
        defer { server.stop() }
        XCTAssertEqual(server.maxConnections, 10)
    }

    func testConnectionLimit_KeepsReserveOfAnEighthBetween32And1024_PlusLoopDescriptors() {
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: 64, eventLoops: 2), 64 - 32 - 4)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: 1024, eventLoops: 2), 1024 - 128 - 4)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: 20_000, eventLoops: 8), 20_000 - 1024 - 16)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: 1_048_576, eventLoops: 4), 50_000)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 100, descriptorLimit: 1024, eventLoops: 1), 100)
    }

    func testConnectionLimit_IsAtLeastOne_WhenReserveTakesEverything() {
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: 16, eventLoops: 2), 1)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 50_000, descriptorLimit: Int.max, eventLoops: 2), 50_000)
        XCTAssertEqual(HTTPServer.connectionLimit(configured: 0, descriptorLimit: 1024, eventLoops: 2), 0, "a configured 0 still refuses everyone")
    }

    func testServer_RefusesConnectionsBeyondItsLimit_AndServesAgainWhenOneCloses() throws {
        var configuration = ServerFixture.relaxed
        configuration.maxConnections = 2
        let server = try ServerFixture.start(configuration)
        defer { server.stop() }
        let first = try ServerFixture.client(server)
        let second = try ServerFixture.client(server)
        XCTAssertEqual(try first.roundTrip("GET", "/hello").text, "hi")
        XCTAssertEqual(try second.roundTrip("GET", "/hello").text, "hi")
        let third = try ServerFixture.client(server)
        XCTAssertTrue(try third.waitForClose(), "a third connection was kept")
        first.close()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 })
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi")
    }
}
