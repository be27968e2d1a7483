import JOSE
import MiniHTTP

/// `GET /__mock/notifications[?after=ID&wait=S]`: the delivery log — each notification's id,
/// event, target URL, JWT and decoded claims, attempts and outcome. With `wait`, holds the
/// request up to S seconds (at most 60) until a notification after ID has settled, so a test
/// awaits delivery without sleeping. `DELETE /__mock/notifications` clears settled records;
/// `DELETE /__mock/notifications?pending=cancel` first abandons the pending ones, so all go.
struct NotificationsEndpoint: Sendable {
    let notifications: NotificationDeliverer?

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.notificationLog)
        var after: UInt64 = 0
        var wait: Double = 0
        for (name, value) in query {
            switch name {
            case "after":
                guard let number = UInt64(value) else { throw ControlRequest.Failure(message: "expected a notification id", field: "after") }
                after = number
            case "wait":
                wait = try ControlRequest.waitSeconds(value)
            default: break
            }
        }
        guard let notifications else { return ControlResponse.json(.object(["notifications": .array([])])) }
        let records = wait > 0 ? await notifications.await(after: after, seconds: wait) : notifications.records(after: after)
        return ControlResponse.json(.object(["notifications": .array(records.map { .object($0.json) })]))
    }

    func clear(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.clearNotifications)
        var cancelPending = false
        for (_, value) in query {
            guard value == "cancel" else { throw ControlRequest.Failure(message: "expected cancel", field: "pending") }
            cancelPending = true
        }
        notifications?.clear(cancelPending: cancelPending)
        return ControlResponse.json(.object(["notifications": .array([])]))
    }
}
