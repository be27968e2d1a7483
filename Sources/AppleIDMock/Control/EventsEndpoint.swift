import JOSE
import MiniHTTP

/// `POST /__mock/events` `{"type", "user", "client_id"}`: a user does at Apple what only a user
/// can do — stop using Sign in with Apple for the app (`consent-revoked`), delete their account
/// (`account-delete` / `account-deleted`), turn relay forwarding off or on (`email-disabled`,
/// `email-enabled`). The state changes at once; the app group's notification follows
/// (apple-reference.md §7). Answers 202 `{"notification": id or null, "type", "user"}`.
struct EventsEndpoint: Sendable {
    let domain: AppleIDDomain
    let notifications: NotificationDeliverer?

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, known: ["type", "user", "client_id"])
        let name = try body.string("type")
        guard let type = AccountEventType(name: name) else {
            throw ControlRequest.Failure(message: "expected \(AccountEventType.names)", field: "type")
        }
        let user = try body.string("user")
        let clientID = try body.string("client_id")
        // The operation names the notifications it queued: its answer is its own record, never
        // another request's that happened at the same time (probe N3).
        let queued = try domain.state.accountEvent(type, user: user, clientID: clientID)
        notifications?.collect()
        var answer = JSONObject()
        answer["type"] = .string(type == .accountDelete ? domain.scenario.compatibility.accountDeletionEventType : type.rawValue)
        answer["user"] = .string(user)
        answer["notification"] = queued.last.flatMap { notifications?.record(sequence: $0) }.map { .int(Int64($0.id)) } ?? .null
        return ControlResponse.json(.object(answer), status: HTTPStatus(202))
    }
}
