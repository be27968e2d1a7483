import AppleIDMock
import JOSE
import MiniHTTPTesting
import XCTest

/// `GET /auth/keys` in memory; its HEAD answer's framing on the live server.
final class KeysEndpointTests: XCTestCase {
    func testKeysEndpoint_ServesThreeRSAKeysShapedAsApples() async throws {
        let mock = try startClient()
        let response = try await mock.get("/auth/keys")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Content-Type"], "application/json;charset=UTF-8")
        let set = try jsonObject(response.body)
        XCTAssertEqual(set.keys, ["keys"])
        let keys = try XCTUnwrap(set["keys"]?.arrayValue)
        XCTAssertEqual(keys.count, 3)
        var kids: [String] = []
        for key in keys {
            let object = try XCTUnwrap(key.objectValue)
            XCTAssertEqual(object.keys, ["kty", "kid", "use", "alg", "n", "e"])
            XCTAssertEqual(object["kty"], "RSA")
            XCTAssertEqual(object["use"], "sig")
            XCTAssertEqual(object["alg"], "RS256")
            XCTAssertEqual(object["e"], "AQAB")
            XCTAssertEqual(Base64URL.decode(try XCTUnwrap(object["n"]?.stringValue))?.count, 256)
            kids.append(try XCTUnwrap(object["kid"]?.stringValue))
        }
        XCTAssertEqual(kids.sorted(), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
    }

    func testKeysEndpoint_ShufflesOrderBetweenFetches_UnlessTurnedOff() async throws {
        let shuffling = try startClient()
        var orders = Set<String>()
        for _ in 0..<40 { orders.insert(try await shuffling.get("/auth/keys").text) }
        XCTAssertGreaterThan(orders.count, 1, "Apple's key order changes between fetches")

        let steady = try startClient { $0.scenario.compatibility.shuffleKeys = false }
        var steadyOrders = Set<String>()
        for _ in 0..<40 { steadyOrders.insert(try await steady.get("/auth/keys").text) }
        XCTAssertEqual(steadyOrders.count, 1)
    }

    func testKeysEndpoint_RejectsPostWith405() async throws {
        let mock = try startClient()
        let response = try await mock.send("POST", "/auth/keys")
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.headers["Allow"], "GET, HEAD")
    }

    // Live: a HEAD answer's framing is the wire's.
    func testKeysEndpoint_HeadReturnsHeadersOnly() throws {
        let server = try startMock { $0.scenario.compatibility.shuffleKeys = false }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let get = try client.roundTrip("GET", "/auth/keys")
        let head = try client.roundTrip("HEAD", "/auth/keys")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, [])
        XCTAssertEqual(head.headers["Content-Length"], "\(get.body.count)")
    }

    func testKeysEndpoint_SendsTheCacheControlKnob_NoCacheByDefault() async throws {
        let mock = try startClient()
        let fetched = try await mock.get("/auth/keys").headers.values("Cache-Control")
        XCTAssertEqual(fetched, ["no-cache"])
        let custom = try startClient { $0.scenario.compatibility.jwksCacheControl = "public, max-age=60" }
        let customValues = try await custom.get("/auth/keys").headers.values("Cache-Control")
        XCTAssertEqual(customValues, ["public, max-age=60"])
        let none = try startClient { $0.scenario.compatibility.jwksCacheControl = nil }
        let noValues = try await none.get("/auth/keys").headers.values("Cache-Control")
        XCTAssertEqual(noValues, [])
        // A value that is no header value is refused at load.
        var bad = Scenario.default
        bad.compatibility.jwksCacheControl = "no-cache\r\nX-Evil: 1"
        XCTAssertEqual((assertThrows(try Scenario.load(json: Array(bad.prettyJSON.utf8))) as? ScenarioError)?.problems.first?.path,
                       "compatibility.jwks_cache_control")
    }

    func testKeysEndpoint_GeneratesMissingKeys_WhenDirectoryHoldsFewer() async throws {
        let mock = try startClient { $0.scenario.signingKeys.count = 4 }
        let listed = try jsonObject(try await mock.get("/__mock/keys").body)["keys"]?.arrayValue ?? []
        let keys = listed.compactMap { $0.objectValue?["kid"]?.stringValue }
        XCTAssertEqual(keys.count, 4)
        XCTAssertEqual(Array(keys.prefix(3)), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(keys[3].count, 10)
        XCTAssertFalse(keys.prefix(3).contains(keys[3]))
    }

    func testKeyRing_RefusesMissingDirectoryAndWrongKeys() throws {
        XCTAssertEqual(assertThrows(try KeyRing.load(count: 1, directory: "/nonexistent/keys", activeKeyID: nil)) as? KeyRingError,
                       .directoryMissing("/nonexistent/keys"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "garbage".write(toFile: directory + "/BadKey0001.pem", atomically: true, encoding: .utf8)
        guard case .unreadable(let path, _) = assertThrows(try KeyRing.load(count: 1, directory: directory, activeKeyID: nil)) as? KeyRingError else {
            return XCTFail("expected unreadable")
        }
        XCTAssertEqual(path, directory + "/BadKey0001.pem")
        XCTAssertEqual(assertThrows(try KeyRing.load(count: 1, directory: nil, activeKeyID: "NoSuchKid1")) as? KeyRingError,
                       .unknownKeyID("NoSuchKid1"))
    }
}
