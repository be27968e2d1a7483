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
        var body = JSONObject()
        body["client_id"] = .string(clientID)
        body["redirect_uri"] = .string(redirectURI)
        body["response_type"] = .string(responseType)
        body["response_mode"] = .string(responseMode)
        if let scope { body["scope"] = .string(scope) }
        if let state { body["state"] = .string(state) }
        if let nonce { body["nonce"] = .string(nonce) }
        if let codeChallenge { body["code_challenge"] = .string(codeChallenge) }
        if let codeChallengeMethod { body["code_challenge_method"] = .string(codeChallengeMethod) }
        body["user"] = .string(user)
        if let hideEmail { body["hide_email"] = .bool(hideEmail) }
        let response = try await postJSON("/__mock/authorize", jsonText(body))
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        let answer = try jsonObject(response.body, file: file, line: line)
        var fields: [String: String] = [:]
        if answer["method"] == "POST" {
            for (name, value) in try XCTUnwrap(answer["form"]?.objectValue, file: file, line: line) { fields[name] = value.stringValue }
        } else {
            let url = try XCTUnwrap(answer["url"]?.stringValue, file: file, line: line)
            let separator: Character = responseMode == "fragment" ? "#" : "?"
            let encoded = url.split(separator: separator, maxSplits: 1).last.map(String.init) ?? ""
            for (name, value) in formPairs(encoded) { fields[name] = value }
        }
        return fields
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
        var pairs: [(String, String)] = [("client_id", clientID), ("client_secret", clientSecret), ("code", code), ("grant_type", "authorization_code")]
        if let redirectURI { pairs.append(("redirect_uri", redirectURI)) }
        if let verifier { pairs.append(("code_verifier", verifier)) }
        return try await postForm("/auth/token", pairs)
    }

    /// `POST /auth/token` with `grant_type=refresh_token`.
    func refresh(_ token: String, clientID: String = "com.example.web") async throws -> MockAnswer {
        try await postForm("/auth/token", [("client_id", clientID), ("client_secret", try await secret(clientID)),
                                           ("grant_type", "refresh_token"), ("refresh_token", token)])
    }

    /// `POST /auth/token` with `grant_type=client_credentials`.
    func clientCredentials(_ clientID: String = "com.example.web", scope: String? = "user.migration", teamID: String = "MOCKTEAM01",
                           keyID: String = "MOCKKEY001", key: P256PrivateKey = mockDeveloperKey) async throws -> MockAnswer {
        var pairs = [("client_id", clientID), ("client_secret", try await secret(clientID, teamID: teamID, keyID: keyID, key: key)),
                     ("grant_type", "client_credentials")]
        if let scope { pairs.append(("scope", scope)) }
        return try await postForm("/auth/token", pairs)
    }

    /// `POST /auth/revoke`.
    func revoke(_ token: String, clientID: String = "com.example.web", hint: String? = nil) async throws -> MockAnswer {
        var pairs = [("client_id", clientID), ("client_secret", try await secret(clientID)), ("token", token)]
        if let hint { pairs.append(("token_type_hint", hint)) }
        return try await postForm("/auth/revoke", pairs)
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
        var body = JSONObject()
        body["user"] = .string(user)
        body["client_id"] = .string(clientID)
        if let scopes { body["scopes"] = .array(scopes.map(JSONValue.string)) }
        if let nonce { body["nonce"] = .string(nonce) }
        if let hideEmail { body["hide_email"] = .bool(hideEmail) }
        return try await postJSON("/__mock/sign-in", jsonText(body))
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
        let jws = try CompactJWS.parse(try XCTUnwrap(token, "no id_token", file: file, line: line))
        let keyID = try XCTUnwrap(jws.keyID, file: file, line: line)
        let keySet = try await publishedKeys(file: file, line: line)
        let jwk = try XCTUnwrap(keySet.key(withID: keyID), "\(keyID) is not published", file: file, line: line)
        XCTAssertTrue(jws.verifyRS256(with: try jwk.rsaPublicKey()), "id_token signature does not verify", file: file, line: line)
        XCTAssertEqual(jws.headerSegment, Base64URL.encode(Array(#"{"kid":"\#(keyID)","alg":"RS256"}"#.utf8)), file: file, line: line)
        return String(decoding: jws.payload, as: UTF8.self)
    }

    /// Verified id_token claims.
    func verifiedClaims(_ token: String?, file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
        try jsonObject(Array(try await verifiedPayload(token, file: file, line: line).utf8), file: file, line: line)
    }
}
