import FoundationEssentials
import JOSE
import MiniHTTP

/// The mock inside a Swift backend's XCTest suite: start it on an ephemeral port, point the
/// backend at `baseURL`, then script Apple — sign users in as an iOS app or a browser would,
/// move the clock, rotate keys, fire account events and read the notifications they caused,
/// reset between tests. Each call is one operation on the mock's state, as its HTTP control API
/// would do it, without a round trip.
extension AppleIDMockServer {
    /// Starts the mock for a test: `scenario` (default: the built-in one) on an ephemeral
    /// loopback port, log lines dropped unless `log` is given. `configure` adjusts the rest.
    public static func startForTesting(scenario: Scenario = .default, keysDirectory: String? = nil,
                                       log: @escaping @Sendable (String) -> Void = { _ in },
                                       configure: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws(AppleIDMockError) -> AppleIDMockServer {
        var configuration = AppleIDMockConfiguration()
        configuration.scenario = scenario
        configuration.port = 0
        configuration.keysDirectory = keysDirectory
        configuration.log = log
        configure(&configuration)
        return try start(configuration)
    }

    /// The mock of `configuration` with no socket, for tests that drive the route table in
    /// memory, notifications included (`configuration.notificationTransport` records them without
    /// a receiver). Its `baseURL` is `configuration.baseURL`, else the configured host and port;
    /// TLS and HTTP limits go unused. End it with `await stop()`.
    public static func inMemory(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration()) throws(AppleIDMockError) -> InMemoryMock {
        try InMemoryMock(configuration)
    }

    /// A native Sign in with Apple, as `ASAuthorizationAppleIDCredential` hands it to the app:
    /// `user`, `identityToken`, `authorizationCode` (redeem it at `/auth/token`), and on the
    /// first authorization `email` and `fullName`.
    public func signInNative(user: String, clientID: String, scopes: [String] = ["name", "email"], nonce: String? = nil,
                             hideEmail: Bool? = nil) throws -> AppleIDDomain.NativeCredential {
        try domain.nativeSignIn(userID: user, clientID: clientID, scopes: scopes, nonce: nonce, hideEmail: hideEmail)
    }

    /// A web sign-in with the user pressing Continue: the fields Apple sends to `redirectURI`
    /// (`code`, `id_token` when asked for, `state`, and `user` JSON on the first authorization),
    /// exactly as the backend's callback receives them. Throws `AuthorizeError` for a request
    /// Apple would refuse.
    public func signInWeb(user: String, clientID: String, redirectURI: String, scopes: [String] = ["name", "email"],
                          responseType: String = "code id_token", state: String? = nil, nonce: String? = nil) throws -> [String: String] {
        var parameters = ["client_id": clientID, "redirect_uri": redirectURI, "response_type": responseType]
        if !scopes.isEmpty {
            parameters["scope"] = scopes.joined(separator: " ")
            parameters["response_mode"] = "form_post"
        }
        if let state { parameters["state"] = state }
        if let nonce { parameters["nonce"] = nonce }
        let request = try domain.validateAuthorize(parameters)
        let delivery = try domain.approve(request, AppleIDDomain.Approval(userID: user))
        return Dictionary(delivery.parameters, uniquingKeysWith: { _, last in last })
    }

    /// A `client_secret` for `clientID`, as a backend mints it: ES256 under the built-in test key
    /// `MOCKKEY001` of team `MOCKTEAM01` (`Keys/AuthKey_MOCKKEY001.p8`), issued now on the clock
    /// the mock checks it against (the mock clock, or real time under
    /// `compatibility.client_secret_clock: "real"`), so it stays valid however far a test moved
    /// the clock. Your backend's own secret needs its key in the scenario's `developer_keys`.
    public func clientSecret(clientID: String, lifetime: Int = 3600) throws -> String {
        let issuedAt = domain.scenario.compatibility.clientSecretClock == .real
            ? Int64(realTime()) : domain.clock.seconds
        return try ClientSecret.make(teamID: "MOCKTEAM01", keyID: BuiltInKeys.developerKeyID, clientID: clientID,
                                     privateKey: try P256PrivateKey(pem: BuiltInKeys.developerKeyPEM), issuedAt: issuedAt, lifetime: lifetime)
    }

    /// Moves the mock clock (codes, tokens, client secrets, rotations and the events timeline
    /// follow it).
    public func advanceClock(by seconds: Double) throws {
        try domain.clock.advance(by: seconds)
    }

    /// One step of Apple's key rotation: a new key published and made the signer; the previous
    /// keys stay published. Returns the new kid.
    @discardableResult
    public func rotateKeys() throws -> String {
        try domain.rotateKeys().keyID
    }

    /// A user's action at Apple (`consent-revoked`, `account-delete`/`account-deleted`,
    /// `email-disabled`, `email-enabled`): the state changes at once and the app group's signed
    /// notification is queued. Returns the notification's id in the log, nil when none was made.
    @discardableResult
    public func fireEvent(_ type: String, user: String, clientID: String) throws -> UInt64? {
        guard let event = AccountEventType(name: type) else {
            throw AccountEventError(.invalid, message: "expected \(AccountEventType.names)", field: "type")
        }
        let sequences = try domain.state.accountEvent(event, user: user, clientID: clientID)
        return sequences.first.flatMap { notifications.record(sequence: $0) }?.id
    }

    /// The delivery log after `after`; with `waitingUpTo` seconds, waits until one of them has
    /// settled (delivered, failed, or nothing to send) or the time is up.
    public func notificationLog(after: UInt64 = 0, waitingUpTo seconds: Double = 0) async -> [NotificationRecord] {
        seconds > 0 ? await notifications.await(after: after, seconds: seconds) : notifications.records(after: after)
    }

    /// Everything back to the scenario's start: users, consents, codes, keys, clock.
    public func reset() {
        // The deliverer reads the reset's event before this returns and abandons what was queued.
        domain.state.reset()
    }
}
