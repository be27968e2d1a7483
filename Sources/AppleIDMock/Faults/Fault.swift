import JOSE
import MiniHTTP

/// A fault for `MockControls.installFault`: what it matches, what it does, how often. Checked as
/// the scenario's `faults` and `POST /__mock/faults` check theirs (docs/unhappy-paths.md), so a
/// fault refused there is refused here with the same key named.
///
/// ```swift
/// try await mock.installFault(.http(.post, "/auth/token", .respond(status: 503), times: 1))
/// try await mock.installFault(.notifications(type: .consentRevoked, .drop))
/// try await mock.installFault(Fault(json: #"{"path": "/auth/keys", "action": "delay", "delay_ms": 2000}"#))
/// ```
public struct Fault: Sendable {
    let spec: FaultSpec

    /// What a fault does to a request to one of Apple's routes.
    public enum RequestAction: Sendable {
        /// Answers this instead of Apple's endpoint (which never sees the request).
        case respond(status: Int, headers: [(String, String)] = [], body: String = "")
        /// Apple's own answer, this much later (up to 10 minutes).
        case delay(Duration)
        /// Closes the connection without answering.
        case close
        /// Resets the connection (RST) without answering.
        case reset
        /// Apple's answer with its body cut after `afterBytes`, then the connection closed.
        case truncate(afterBytes: Int)
        /// Apple's answer with its body cut after `afterBytes`, then nothing more.
        case stall(afterBytes: Int)
        /// `/auth/keys` without the key that signs now (a botched rotation).
        case omitSigningKey
    }

    /// What a fault does to a server-to-server notification.
    public enum NotificationAction: Sendable {
        /// Never sent (the log says `dropped`).
        case drop
        /// Sent twice.
        case duplicate
        /// Held back until the next notification has been sent.
        case reorder
        /// Attempted once, never retried.
        case once
        /// Sent this much later (up to 10 minutes).
        case delay(Duration)
    }

    /// A fault as the scenario's `faults` and `POST /__mock/faults` write it.
    public init(json: String) throws(MockControlError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(json)
        } catch {
            throw MockControlError(field: nil, message: "not JSON: \(error.message)")
        }
        try self.init(value)
    }

    private init(_ value: JSONValue) throws(MockControlError) {
        do {
            spec = try FaultSpec(json: value)
        } catch {
            throw MockControlError(field: error.key, message: error.message)
        }
    }

    /// A fault on requests to `path` with any method: `.http("/auth/keys", .close)`.
    public static func http(_ path: String, _ action: RequestAction, clientID: String? = nil, grantType: String? = nil, times: Int? = nil,
                            probability: Double? = nil, duration: Duration? = nil) throws(MockControlError) -> Fault {
        try http(nil, path, action, clientID: clientID, grantType: grantType, times: times, probability: probability, duration: duration)
    }

    /// A fault on requests to `path` (one of Apple's routes), with `method` when given, and
    /// the request's `client_id` and `grant_type` when given; it fires `times` times (nil:
    /// always) or with `probability`, for `duration` of mock time (nil: until removed).
    public static func http(_ method: HTTPMethod? = nil, _ path: String, _ action: RequestAction, clientID: String? = nil, grantType: String? = nil,
                            times: Int? = nil, probability: Double? = nil, duration: Duration? = nil) throws(MockControlError) -> Fault {
        var object = JSONObject()
        object["path"] = .string(path)
        if let method { object["method"] = .string(method.rawValue) }
        if let clientID { object["client_id"] = .string(clientID) }
        if let grantType { object["grant_type"] = .string(grantType) }
        switch action {
        case .respond(let status, let headers, let body):
            object["action"] = .string("respond")
            object["status"] = .int(Int64(status))
            if !headers.isEmpty {
                var fields = JSONObject()
                for (name, value) in headers { fields[name] = .string(value) }
                object["headers"] = .object(fields)
            }
            object["body"] = .string(body)
        case .delay(let delay):
            object["action"] = .string("delay")
            object["delay_ms"] = .int(delay.milliseconds)
        case .close: object["action"] = .string("close")
        case .reset: object["action"] = .string("reset")
        case .truncate(let afterBytes), .stall(let afterBytes):
            if case .truncate = action { object["action"] = .string("truncate") } else { object["action"] = .string("stall") }
            object["after_bytes"] = .int(Int64(afterBytes))
        case .omitSigningKey: object["action"] = .string("omit_signing_key")
        }
        return try Fault(firing(object, times: times, probability: probability, duration: duration))
    }

    /// A fault on notifications about `type` events (nil: any) for `clientID`'s app group (nil:
    /// any); firing as for `http`.
    public static func notifications(type: AccountEventType? = nil, clientID: String? = nil, _ action: NotificationAction,
                                     times: Int? = nil, probability: Double? = nil, duration: Duration? = nil) throws(MockControlError) -> Fault {
        var object = JSONObject()
        object["target"] = .string("notifications")
        if let type { object["type"] = .string(type.rawValue) }
        if let clientID { object["client_id"] = .string(clientID) }
        switch action {
        case .drop: object["action"] = .string("drop")
        case .duplicate: object["action"] = .string("duplicate")
        case .reorder: object["action"] = .string("reorder")
        case .once: object["action"] = .string("once")
        case .delay(let delay):
            object["action"] = .string("delay")
            object["delay_ms"] = .int(delay.milliseconds)
        }
        return try Fault(firing(object, times: times, probability: probability, duration: duration))
    }

    private static func firing(_ object: JSONObject, times: Int?, probability: Double?, duration: Duration?) -> JSONValue {
        var object = object
        if let times { object["times"] = .int(Int64(times)) }
        if let probability { object["probability"] = .double(probability) }
        if let duration { object["for_seconds"] = .int(duration.components.seconds) }
        return .object(object)
    }
}

extension Duration {
    /// Whole milliseconds, clamped to what a JSON integer holds.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1000, seconds > Int64.min / 1000 else { return seconds < 0 ? Int64.min : Int64.max }
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
