import AppleIDMock
import MiniHTTPTesting
import XCTest

final class DiscoveryEndpointTests: XCTestCase {
    private func expectedDocument(issuer: String, base: String) -> String {
        #"{"issuer":"\#(issuer)","authorization_endpoint":"\#(base)/auth/authorize","token_endpoint":"\#(base)/auth/token","revocation_endpoint":"\#(base)/auth/revoke","jwks_uri":"\#(base)/auth/keys","response_types_supported":["code"],"response_modes_supported":["query","fragment","form_post"],"subject_types_supported":["pairwise"],"id_token_signing_alg_values_supported":["RS256"],"scopes_supported":["openid","email","name"],"token_endpoint_auth_methods_supported":["client_secret_post"],"claims_supported":["aud","email","email_verified","exp","iat","is_private_email","iss","nonce","nonce_supported","real_user_status","sub","transfer_sub"]}"#
    }

    func testDiscovery_ServesApplesDocumentWithBoundAddress_AndApplesIssuer() throws {
        let server = try startMock()
        defer { server.stop() }
        let response = try RawHTTPClient(port: server.port).roundTrip("GET", "/.well-known/openid-configuration")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Content-Type"], "application/json;charset=UTF-8")
        XCTAssertEqual(response.text, expectedDocument(issuer: "https://appleid.apple.com", base: "http://127.0.0.1:\(server.port)"))
    }

    // In memory: what the document says needs no socket.
    func testDiscovery_UsesConfiguredIssuerAndBaseURLSeparately() async throws {
        let mock = try inMemoryMock {
            $0.issuer = "http://apple-mock:8080"
            $0.baseURL = "http://localhost:9999/"
        }
        addTeardownBlock { await mock.stop() }
        let response = await mock.get("/.well-known/openid-configuration")
        XCTAssertEqual(response.text, expectedDocument(issuer: "http://apple-mock:8080", base: "http://localhost:9999"))
    }

    func testHealth_ReportsOkAndActiveKey() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let response = await mock.get("/__mock/health")
        XCTAssertEqual(response.status.code, 200)
        XCTAssertEqual(response.text, #"{"active_kid":"W2ek7HdPaL","issuer":"https://appleid.apple.com","status":"ok"}"#)
        let missing = await mock.get("/__mock/healthz")
        XCTAssertEqual(missing.status.code, 404)
    }
}
