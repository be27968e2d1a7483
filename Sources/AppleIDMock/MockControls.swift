import Dispatch
import FoundationEssentials
import JOSE
import MiniHTTP

/// What a test does to the mock, the same whether it runs on a socket (`AppleIDMockServer`) or
/// in memory (`InMemoryMock`): write a test body once over `some MockControls` and run it in both
/// modes. Sign users in as an iOS app or a browser would, mint client secrets, fire a user's
/// actions at Apple, move the clock, rotate keys, install faults, read the request journal and
/// the notification log, reset. Each control is one operation of the mock's domain, the one the
/// matching `/__mock/` route runs; with a state file it returns once that operation is committed.
public protocol MockControls: Sendable {
    /// The address clients use: discovery and the issuer's URLs are built from it.
    var baseURL: String { get }
    /// Sends `request` as a client would: over a connection to the server, or to the route table
    /// in memory. The answer as the route gave it (`Content-Length` aside).
    func respond(to request: HTTPRequest) async -> HTTPResponse
    /// The mock underneath, for the controls below (nothing to use on its own).
    var core: MockCore { get }
}

/// The mock a `MockControls` drives: its domain, deliverer and journal.
public struct MockCore: Sendable {
    let assembly: MockAssembly
    let realTime: @Sendable () -> Double
}

/// A control the mock refused: the input at fault and what is wrong, as the control API names it.
public struct MockControlError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input at fault (`user`, `client_id`, `redirect_uri`, `kid`, …); nil when none is.
    public let field: String?
    /// What is wrong.
    public let message: String

    /// `field: message`.
    public var description: String { field.map { "\($0): \(message)" } ?? message }

    init(field: String?, message: String) {
        self.field = field
        self.message = message
    }
}

/// The scopes an app asks for.
public enum Scope: String, Sendable, CaseIterable {
    /// The user's name, on the first authorization.
    case name
    /// The user's email (or relay address), on the first authorization.
    case email
}

/// What `ASAuthorizationAppleIDCredential` hands an app after a native sign-in.
public struct NativeCredential: Sendable, Equatable {
    /// `user`: the team-scoped `sub`; key your user by it.
    public let user: String
    /// `identityToken`: an id_token with `c_hash` of the code.
    public let identityToken: String
    /// `authorizationCode`: redeemable once at `/auth/token` within five minutes, with the bundle
    /// id and no redirect_uri.
    public let authorizationCode: String
    /// `email`: on the first authorization only, when `email` was asked for.
    public let email: String?
    /// `fullName`, given then family: on the first authorization only, when `name` was asked for.
    public let fullName: [String]?
    /// `realUserStatus`: 0 unsupported, 1 unknown, 2 likely real; meaningful the first time only.
    public let realUserStatus: Int
}

/// What Apple's redirect hands a web callback after the user pressed Continue.
public struct WebSignIn: Sendable, Equatable {
    /// Where it goes: the request's registered `redirect_uri`.
    public let redirectURI: String
    /// How it goes: `query`, `fragment` or `form_post`.
    public let responseMode: String
    /// `code`: redeemable once at `/auth/token` with this `redirect_uri`.
    public let code: String
    /// `id_token`, when the response type asked for one.
    public let idToken: String?
    /// `state`, as the request sent it.
    public let state: String?
    /// `user`: the JSON with name and email, on the first authorization with scopes only.
    public let user: String?
}

extension MockControls {
    var domain: AppleIDDomain { core.assembly.domain }

    /// Returns once what the control changed is committed to the state file (at once without one).
    private func committed() async throws(MockControlError) {
        do {
            try await domain.events.barrier.settle()
        } catch {
            throw MockControlError(field: nil, message: error.description)
        }
    }

    /// The answer to `method target` (path and query) with `headers` and `body`. A control API
    /// request with a body needs `Content-Type: application/json`, as over the wire.
    public func respond(_ method: HTTPMethod, _ target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) async -> HTTPResponse {
        await respond(to: HTTPRequest(method: method, target: target, headers: headers, body: body))
    }

    /// A native Sign in with Apple, as an iOS app receives it (`POST /__mock/sign-in`).
    public func signInNative(user: String, clientID: String, scopes: [Scope] = [.name, .email], nonce: String? = nil,
                             hideEmail: Bool? = nil) async throws(MockControlError) -> NativeCredential {
        let credential: AppleIDDomain.NativeCredential
        do {
            credential = try domain.nativeSignIn(userID: user, clientID: clientID, scopes: scopes.map(\.rawValue), nonce: nonce, hideEmail: hideEmail)
        } catch {
            throw MockControlError(error)
        }
        try await committed()
        return NativeCredential(user: credential.user, identityToken: credential.identityToken, authorizationCode: credential.authorizationCode,
                                email: credential.email, fullName: credential.fullName.map { [$0.givenName, $0.familyName] },
                                realUserStatus: credential.realUserStatus)
    }

    /// A web sign-in with the user pressing Continue (`/auth/authorize`, then the consent): the
    /// fields Apple sends to `redirectURI`, exactly as the backend's callback receives them.
    /// `idToken` asks for `code id_token`; with scopes the answer is a `form_post`. A request
    /// Apple would refuse throws, naming the parameter and Apple's error code.
    public func signInWeb(user: String, clientID: String, redirectURI: String, scopes: [Scope] = [.name, .email], idToken: Bool = true,
                          state: String? = nil, nonce: String? = nil) async throws(MockControlError) -> WebSignIn {
        var parameters = ["client_id": clientID, "redirect_uri": redirectURI, "response_type": idToken ? "code id_token" : "code"]
        if !scopes.isEmpty {
            parameters["scope"] = scopes.map(\.rawValue).joined(separator: " ")
            parameters["response_mode"] = "form_post"
        }
        if let state { parameters["state"] = state }
        if let nonce { parameters["nonce"] = nonce }
        let delivery: Delivery
        do {
            delivery = try domain.approve(try domain.validateAuthorize(parameters), AppleIDDomain.Approval(userID: user))
        } catch let error as AuthorizeError {
            throw MockControlError(field: error.field, message: "\(error.code): \(error.message)")
        } catch let error as AppleIDDomain.SignInRefusal {
            throw MockControlError(error)
        } catch {
            throw MockControlError(field: nil, message: "\(error)")
        }
        try await committed()
        let fields = Dictionary(delivery.parameters, uniquingKeysWith: { _, last in last })
        return WebSignIn(redirectURI: delivery.redirectURI, responseMode: delivery.responseMode.rawValue, code: fields["code"] ?? "",
                         idToken: fields["id_token"], state: fields["state"], user: fields["user"])
    }

    /// A `client_secret` for `clientID`, as a backend mints it: ES256 under the built-in test key
    /// `MOCKKEY001` of team `MOCKTEAM01` (`Keys/AuthKey_MOCKKEY001.p8`), issued now on the clock
    /// the mock checks it against (the mock clock, or real time under
    /// `compatibility.client_secret_clock: "real"`), so it stays valid however far a test moved
    /// the clock. Your backend's own secret needs its key in the scenario's `developer_keys`.
    public func clientSecret(clientID: String, lifetime: Duration = .seconds(3600)) throws(MockControlError) -> String {
        let issuedAt = domain.scenario.compatibility.clientSecretClock == .real ? Int64(core.realTime()) : domain.now
        let seconds = lifetime.components.seconds
        guard seconds > 0, seconds <= 15_777_000 else {
            throw MockControlError(field: "lifetime", message: "expected 1 second to 6 months (15777000 s), Apple's limit")
        }
        do {
            return try ClientSecret.make(teamID: "MOCKTEAM01", keyID: BuiltInKeys.developerKeyID, clientID: clientID,
                                         privateKey: try P256PrivateKey(pem: BuiltInKeys.developerKeyPEM), issuedAt: issuedAt,
                                         lifetime: Int(seconds))
        } catch {
            throw MockControlError(field: nil, message: "signing failed: \(error)")
        }
    }

    /// A user's action at Apple (`POST /__mock/events`): the state changes at once and the app
    /// group's signed notification is queued. Returns the notification's id in the log, nil when
    /// none was made (the app group has no notification URL).
    @discardableResult
    public func fireEvent(_ type: AccountEventType, user: String, clientID: String) async throws(MockControlError) -> UInt64? {
        let sequences: [UInt64]
        do {
            sequences = try domain.accountEvent(type, user: user, clientID: clientID)
        } catch {
            throw MockControlError(error)
        }
        try await committed()
        return sequences.first.flatMap { core.assembly.notifications.record(sequence: $0) }?.id
    }

    /// The user changed their Apple Account password (`POST /__mock/events` with
    /// `password-changed`): their refresh tokens for every app answer `invalid_grant`, no app is
    /// notified, and the credential state stays `authorized` (Apple does not document it).
    public func changePassword(user: String) async throws(MockControlError) {
        do {
            _ = try domain.passwordChanged(user: user)
        } catch {
            throw MockControlError(error)
        }
        try await committed()
    }

    /// Moves the mock clock (`POST /__mock/clock`; back when negative): codes, tokens, client
    /// secrets, the rotation pattern and the scenario's timeline follow it.
    public func advanceClock(by duration: Duration) async throws(MockControlError) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        do {
            try await domain.moveClock([.advance(seconds)])
        } catch {
            throw MockControlError(field: "advance", message: MockClock.OutOfRange.message)
        }
        try await committed()
    }

    /// One step of Apple's key rotation (`POST /__mock/keys/rotate`): a new key published and made
    /// the signer; the previous keys stay published. Returns the new kid.
    @discardableResult
    public func rotateKeys() async throws(MockControlError) -> String {
        let keyID: String
        do {
            keyID = try await domain.rotateKeys().keyID
        } catch {
            throw MockControlError(error)
        }
        try await committed()
        return keyID
    }

    /// Installs `fault` (`POST /__mock/faults`); returns its id.
    @discardableResult
    public func installFault(_ fault: Fault) async throws(MockControlError) -> String {
        try await install([fault.spec]).first ?? ""
    }

    /// Installs the faults of one of Apple's recorded incidents (`{"incident": …}`); returns their
    /// ids. `minutes` is the outage's length where the incident has one.
    @discardableResult
    public func installIncident(_ incident: FaultIncident, minutes: Int? = nil) async throws(MockControlError) -> [String] {
        if let minutes, !(1...FaultIncident.maxMinutes).contains(minutes) {
            throw MockControlError(field: "minutes", message: "expected 1 to \(FaultIncident.maxMinutes)")
        }
        return try await install(incident.faults(minutes: minutes))
    }

    private func install(_ specs: [FaultSpec]) async throws(MockControlError) -> [String] {
        let installed: [InstalledFault]
        do {
            installed = try domain.installFaults(specs)
        } catch {
            throw MockControlError(error)
        }
        try await committed()
        return installed.map(\.id)
    }

    /// Removes every fault (`DELETE /__mock/faults`); returns how many went.
    @discardableResult
    public func removeFaults() async throws(MockControlError) -> Int {
        let count = domain.removeFaults()
        try await committed()
        return count
    }

    /// The installed faults, in the order they match, with how often each fired.
    public var faults: [InstalledFault] { domain.faults }

    /// Everything back to the scenario's start (`POST /__mock/reset`): users, consents, codes,
    /// keys, clock and faults; queued notifications are abandoned.
    public func reset() async throws(MockControlError) {
        domain.reset()
        try await committed()
    }

    /// The journaled requests matching `filter`, oldest first (`GET /__mock/requests`).
    public func requests(matching filter: RequestFilter = RequestFilter()) -> [JournalEntry] {
        core.assembly.journal?.entries(matching: filter).entries ?? []
    }

    /// The requests matching `filter`, waiting up to `waitingUpTo` (at most 60 s) for a first
    /// one: a test awaits a backend's call without sleeping.
    public func requests(matching filter: RequestFilter, waitingUpTo duration: Duration) async -> [JournalEntry] {
        guard let journal = core.assembly.journal else { return [] }
        return await journal.awaitEntries(matching: filter, limit: .max, seconds: min(max(duration.seconds, 0), 60)).entries
    }

    /// Forgets every journaled request; returns how many.
    @discardableResult
    public func clearRequests() -> Int { core.assembly.journal?.clear() ?? 0 }

    /// The notification log after id `after`; with `waitingUpTo`, waits until one of them has
    /// settled (delivered, failed, or nothing to send) or the time is up.
    public func notificationLog(after: UInt64 = 0, waitingUpTo duration: Duration = .zero) async -> [NotificationRecord] {
        let notifications = core.assembly.notifications
        return duration > .zero ? await notifications.await(after: after, seconds: duration.seconds) : notifications.records(after: after)
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
