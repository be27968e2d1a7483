import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

// The Sign in with Apple factories of `ProtocolFixtures.swift`, written once over
// `MockClient.respond`, so they run in either mode; everything defaulted (house style rule 13).

extension MockClient {
    /// `method target` with `headers` and `body`.
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> MockAnswer {
        try await respond(method, target, headers: headers, body: body)
    }

    /// `GET target`.
    func get(_ target: String) async throws -> MockAnswer {
        try await respond("GET", target, headers: [], body: [])
    }

    /// `DELETE target`.
    func delete(_ target: String) async throws -> MockAnswer {
        try await respond("DELETE", target, headers: [], body: [])
    }

    /// POSTs form-encoded pairs (in order, duplicates kept).
    func postForm(_ path: String, _ pairs: [(String, String)], headers: [(String, String)] = []) async throws -> MockAnswer {
        try await respond("POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                          body: Array(HTTPForm.encode(pairs).utf8))
    }

    /// POSTs a JSON body (none when `body` is empty, as the control API's callers do).
    func postJSON(_ path: String, _ body: String) async throws -> MockAnswer {
        try await respond("POST", path, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// Mock "now" in whole seconds, as `GET /__mock/clock` tells it.
    func now(file: StaticString = #filePath, line: UInt = #line) async throws -> Int64 {
        let answer = try await get("/__mock/clock")
        XCTAssertEqual(answer.status, 200, answer.text, file: file, line: line)
        return try XCTUnwrap(try jsonObject(answer.body, file: file, line: line)["epoch"]?.intValue, file: file, line: line)
    }

    /// Moves the mock clock by `seconds` through `POST /__mock/clock` (fails the test unless 200).
    func advanceClock(by seconds: Double, file: StaticString = #filePath, line: UInt = #line) async throws {
        let number = seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
        let answer = try await postJSON("/__mock/clock", #"{"advance":\#(number)}"#)
        XCTAssertEqual(answer.status, 200, answer.text, file: file, line: line)
    }

    /// A client_secret for `clientID`, signed with the default team's key, issued at mock now.
    func secret(_ clientID: String = "com.example.web", teamID: String = "MOCKTEAM01", keyID: String = "MOCKKEY001",
                key: P256PrivateKey = mockDeveloperKey, issuedAt: Int64? = nil, lifetime: Int = 3600,
                audience: String = "https://appleid.apple.com") async throws -> String {
        let issued: Int64
        if let issuedAt { issued = issuedAt } else { issued = try await now() }
        return try ClientSecret.make(teamID: teamID, keyID: keyID, clientID: clientID, privateKey: key, issuedAt: issued,
                                     lifetime: lifetime, audience: audience)
    }

    /// `GET /auth/authorize` with these query parameters.
    func authorizePage(_ parameters: [(String, String)]) async throws -> MockAnswer {
        try await get("/auth/authorize?" + HTTPForm.encode(parameters))
    }

    /// A web authorization through `POST /__mock/authorize`; returns the delivered form or
    /// redirect parameters. Fails the test when the mock refuses.
    func headlessAuthorize(clientID: String = "com.example.web", redirectURI: String = webRedirect, responseType: String = "code",
                           responseMode: String = "form_post", scope: String? = "name email", state: String? = "st-1",
                           nonce: String? = "n-1", user: String = "alice", hideEmail: Bool? = nil,
                           codeChallenge: String? = nil, codeChallengeMethod: String? = nil,
                           file: StaticString = #filePath, line: UInt = #line) async throws -> [String: String] {
        let body = SignInRequests.headlessAuthorize(clientID: clientID, redirectURI: redirectURI, responseType: responseType,
                                                    responseMode: responseMode, scope: scope, state: state, nonce: nonce, user: user,
                                                    hideEmail: hideEmail, codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod)
        let response = try await postJSON("/__mock/authorize", body)
        return try SignInRequests.delivered(status: response.status, body: response.body, responseMode: responseMode, file: file, line: line)
    }

    /// A fresh web authorization code for alice at the default Services ID.
    func webCode(redirectURI: String = webRedirect, scope: String? = "name email", nonce: String? = "n-1", user: String = "alice",
                 codeChallenge: String? = nil, codeChallengeMethod: String? = nil,
                 file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let fields = try await headlessAuthorize(redirectURI: redirectURI, scope: scope, nonce: nonce, user: user, codeChallenge: codeChallenge,
                                                 codeChallengeMethod: codeChallengeMethod, file: file, line: line)
        return try XCTUnwrap(fields["code"], file: file, line: line)
    }

    /// `POST /auth/token` with `grant_type=authorization_code`; nil parameters are left out.
    func redeem(_ code: String, clientID: String = "com.example.web", redirectURI: String? = webRedirect,
                verifier: String? = nil, secret: String? = nil) async throws -> MockAnswer {
        let clientSecret: String
        if let secret { clientSecret = secret } else { clientSecret = try await self.secret(clientID) }
        return try await postForm("/auth/token", SignInRequests.redeem(code: code, clientID: clientID, secret: clientSecret, redirectURI: redirectURI,
                                                                       verifier: verifier))
    }

    /// `POST /auth/token` with `grant_type=refresh_token`.
    func refresh(_ token: String, clientID: String = "com.example.web") async throws -> MockAnswer {
        try await postForm("/auth/token", SignInRequests.refresh(token: token, clientID: clientID, secret: try await secret(clientID)))
    }

    /// `POST /auth/token` with `grant_type=client_credentials`.
    func clientCredentials(_ clientID: String = "com.example.web", scope: String? = "user.migration", teamID: String = "MOCKTEAM01",
                           keyID: String = "MOCKKEY001", key: P256PrivateKey = mockDeveloperKey) async throws -> MockAnswer {
        let clientSecret = try await secret(clientID, teamID: teamID, keyID: keyID, key: key)
        return try await postForm("/auth/token", SignInRequests.clientCredentials(clientID: clientID, secret: clientSecret, scope: scope))
    }

    /// `POST /auth/revoke`.
    func revoke(_ token: String, clientID: String = "com.example.web", hint: String? = nil) async throws -> MockAnswer {
        try await postForm("/auth/revoke", SignInRequests.revoke(token: token, clientID: clientID, secret: try await secret(clientID), hint: hint))
    }

    /// Redeems a fresh web code; returns the token answer (fails the test unless 200).
    @discardableResult
    func webTokens(user: String = "alice", file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
        let response = try await redeem(try await webCode(user: user, file: file, line: line))
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)
    }

    /// `POST /__mock/sign-in`.
    func nativeSignIn(user: String = "alice", clientID: String = "com.example.app", scopes: [String]? = ["name", "email"],
                      nonce: String? = "native-nonce", hideEmail: Bool? = nil) async throws -> MockAnswer {
        try await postJSON("/__mock/sign-in", SignInRequests.nativeSignIn(user: user, clientID: clientID, scopes: scopes, nonce: nonce,
                                                                          hideEmail: hideEmail))
    }

    /// `GET /auth/keys`, parsed by the JOSE layer (fails the test unless 200).
    func publishedKeys(file: StaticString = #filePath, line: UInt = #line) async throws -> JWKSet {
        let response = try await get("/auth/keys")
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try JWKSet(json: try JSONParser.parse(response.body))
    }

    /// Verifies an id_token's RS256 signature under the key `/auth/keys` publishes for its
    /// `kid`, and its header's bytes; returns its payload bytes as text.
    func verifiedPayload(_ token: String?, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let keySet = try await publishedKeys(file: file, line: line)
        return try SignInRequests.verifiedPayload(token, key: { try keySet.key(withID: $0)?.rsaPublicKey() }, file: file, line: line)
    }

    /// Verified id_token claims.
    func verifiedClaims(_ token: String?, file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
        try jsonObject(Array(try await verifiedPayload(token, file: file, line: line).utf8), file: file, line: line)
    }
}
