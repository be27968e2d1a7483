import JOSE
import MiniHTTP

/// `/__mock/events`.
///
/// `POST {"type", "user", "client_id"}`: a user does at Apple what only a user can do — stop
/// using Sign in with Apple for the app (`consent-revoked`), delete their account
/// (`account-delete` / `account-deleted`), turn relay forwarding off or on (`email-disabled`,
/// `email-enabled`). The state changes at once; the notifications follow (apple-behaviour.md
/// §7). `{"type": "password-changed", "user"}` ends the user's refresh tokens for every app and
/// notifies none (§9). Answers 202 `{"notification": id or null, "notifications": [ids], "type", "user"}`:
/// the first id is the named app group's; a deletion tells every app group the user signed in to.
///
/// `GET [?after=SEQ&wait=S&type=NAME,…&limit=N]`: the event feed — every change to the mock's
/// state in order (`{"events": [...], "last": SEQ, "missed": N}`); with `wait`, holds the request
/// up to S seconds (at most 60) until an event after SEQ of those types is recorded.
struct EventsEndpoint: Sendable {
    let domain: AppleIDDomain
    let notifications: NotificationDeliverer?

    /// Most events one answer lists.
    static let pageLimit = 1000

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.accountEvent)
        let name = try body.string("type")
        if name == Self.passwordChanged { return try passwordChanged(body) }
        guard let type = AccountEventType(name: name) else {
            throw ControlRequest.Failure(message: "expected \(AccountEventType.quoted(AccountEventType.nameList + [Self.passwordChanged]))", field: "type")
        }
        let user = try body.string("user")
        let clientID = try body.string("client_id")
        // The operation names the events it caused: its answer is its own records, never
        // another request's that happened at the same time. The deliverer read them
        // before the operation returned.
        let sequences = try domain.accountEvent(type, user: user, clientID: clientID)
        let ids = sequences.compactMap { notifications?.record(sequence: $0)?.id }
        var answer = JSONObject()
        answer["type"] = .string(type == .accountDelete ? domain.scenario.compatibility.accountDeletionEventType : type.rawValue)
        answer["user"] = .string(user)
        answer["notification"] = ids.first.map { .int(Int64(clamping: $0)) } ?? .null
        answer["notifications"] = .array(ids.map { .int(Int64(clamping: $0)) })
        return ControlResponse.json(.object(answer), status: HTTPStatus(202))
    }

    /// The user action that ends refresh tokens silently (§9).
    static let passwordChanged = "password-changed"

    /// `{"type": "password-changed", "user"}`: every app's refresh tokens of the user die and no
    /// app is told. The answer has the other actions' shape, with no notification.
    private func passwordChanged(_ body: ControlRequest) throws -> HTTPResponse {
        let user = try body.string("user")
        if body.object["client_id"] != nil {
            throw ControlRequest.Failure(message: "a password change is the user's, for every app: leave client_id out", field: "client_id")
        }
        _ = try domain.passwordChanged(user: user)
        let answer: JSONObject = ["type": .string(Self.passwordChanged), "user": .string(user), "notification": .null, "notifications": .array([])]
        return ControlResponse.json(.object(answer), status: HTTPStatus(202))
    }

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.eventFeed)
        var after: UInt64 = 0
        var wait: Double = 0
        var limit = Self.pageLimit
        var types: Set<String>?
        for (name, value) in query {
            switch name {
            case "after":
                guard let number = UInt64(value) else { throw ControlRequest.Failure(message: "expected an event sequence number (0 or more)", field: "after") }
                after = number
            case "wait":
                wait = try ControlRequest.waitSeconds(value)
            case "limit":
                guard let number = Int(value), (1...Self.pageLimit).contains(number) else {
                    throw ControlRequest.Failure(message: "expected 1 to \(Self.pageLimit)", field: "limit")
                }
                limit = number
            case "type":
                let names = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard !names.isEmpty, names.count <= DomainEvent.names.count, names.allSatisfy(DomainEvent.names.contains) else {
                    throw ControlRequest.Failure(message: "expected event types separated by commas, among "
                                                 + DomainEvent.names.joined(separator: ", "), field: "type")
                }
                types = Set(names)
            default: break
            }
        }
        let page = wait > 0
            ? await domain.events.awaitEvents(after: after, limit: limit, types: types, seconds: wait, realTime: domain.owner.realTime)
            : domain.events.events(after: after, limit: limit, types: types)
        var answer = JSONObject()
        answer["events"] = .array(page.events.map { .object($0.json) })
        answer["last"] = .int(Int64(clamping: page.events.last?.sequence ?? after))
        answer["missed"] = .int(Int64(clamping: page.missed))
        return ControlResponse.json(.object(answer))
    }
}
