import JOSE
import MiniHTTP

/// One fault as a scenario's `faults` or `POST /__mock/faults` states it: what it matches, how
/// often it fires, and what it does. Validated where it enters; the JSON it was read from is
/// what `json` writes back.
///
/// ```json
/// {"method": "POST", "path": "/auth/token", "grant_type": "authorization_code",
///  "times": 1, "action": "respond", "status": 503, "headers": {"Content-Type": "text/html"}, "body": "<html>…"}
/// {"path": "/auth/keys", "action": "delay", "delay_ms": 2000, "probability": 0.5}
/// {"target": "notifications", "type": "consent-revoked", "action": "duplicate"}
/// {"method": "POST", "path": "/auth/token", "action": "respond", "status": 503, "for_seconds": 300}
/// ```
/// `FaultIncident` packages the faults that reproduce one of Apple's own incidents.
package struct FaultSpec: Sendable, Equatable {
    /// Where a fault acts.
    package enum Target: Sendable, Equatable {
        /// A request to one of Apple's routes (never `/__mock/*`): `method` nil matches any the path takes.
        case http(method: HTTPMethod?, path: String, clientID: String?, grantType: String?)
        /// A server-to-server notification about to be queued: `type` and `clientID` nil match any.
        case notifications(type: String?, clientID: String?)
    }

    /// What a fault does.
    package enum Action: Sendable, Equatable {
        /// Answer this instead of Apple's endpoint (which never sees the request).
        case respond(status: Int, headers: [(String, String)], body: String)
        /// Apple's own answer, `delay_ms` later.
        case delay
        /// Close the connection without answering (Apple's endpoint never sees the request).
        case close
        /// Reset the connection (RST) without answering.
        case reset
        /// Apple's answer with its body cut after `after_bytes`, then the connection closed.
        case truncate(afterBytes: Int)
        /// Apple's answer with its body cut after `after_bytes`, then nothing more.
        case stall(afterBytes: Int)
        /// Notifications: never sent (the delivery log says `dropped`).
        case drop
        /// Notifications: sent twice (two deliveries of the same JWT).
        case duplicate
        /// Notifications: held back until the next notification has been sent, then sent.
        case reorder
        /// `/auth/keys`: Apple's answer without the key that signs now (a botched rotation).
        case omitSigningKey
        /// Notifications: one attempt, never retried whatever the receiver answers.
        case once

        /// Its name in JSON and in events.
        package var name: String {
            switch self {
            case .respond: "respond"
            case .delay: "delay"
            case .close: "close"
            case .reset: "reset"
            case .truncate: "truncate"
            case .stall: "stall"
            case .drop: "drop"
            case .duplicate: "duplicate"
            case .reorder: "reorder"
            case .omitSigningKey: "omit_signing_key"
            case .once: "once"
            }
        }

        package static func == (lhs: Action, rhs: Action) -> Bool {
            switch (lhs, rhs) {
            case let (.respond(a, b, c), .respond(x, y, z)): a == x && b.elementsEqual(y, by: ==) && c == z
            case let (.truncate(a), .truncate(b)), let (.stall(a), .stall(b)): a == b
            default: lhs.name == rhs.name && lhs.name != "respond" && lhs.name != "truncate" && lhs.name != "stall"
            }
        }
    }

    /// How often a fault fires among the requests it matches.
    enum Firing: Sendable, Equatable {
        /// Every time.
        case always
        /// The next `count` times, then never.
        case times(Int)
        /// Each time with this probability, drawn from the fault stream (seeded by `--seed`).
        case probability(Double)
    }

    package var target: Target
    package var action: Action
    var firing: Firing
    /// Milliseconds to wait before the action (0…600,000); required for `delay`.
    var delayMilliseconds: Int
    /// Seconds of mock time the fault acts for once installed (`for_seconds`); nil: until removed.
    package var forSeconds: Int?
    /// The incident preset that installed it (`incident`), if any.
    var incident: String?

    /// Longest `for_seconds`: a year of mock time.
    package static let maxForSeconds = 31_536_000

    /// Most firings a `times` fault asks for.
    static let maxTimes = 1_000_000
    /// Most faults installed at once (scenario and runtime together).
    static let maxCount = 256
    /// Largest `respond` body, in UTF-8 bytes.
    package static let maxBodyBytes = 64 * 1024
    /// Most `respond` header fields.
    static let maxHeaders = 32

    /// Apple's routes and the methods each takes: what a fault can match.
    static let appleRoutes: [(path: String, methods: [HTTPMethod])] = [
        ("/auth/authorize", [.get, .post]), ("/auth/token", [.post]), ("/auth/revoke", [.post]), ("/auth/keys", [.get]),
        ("/auth/usermigrationinfo", [.post]), ("/.well-known/openid-configuration", [.get]),
    ]

    static let httpActions = ["respond", "delay", "close", "reset", "truncate", "stall", "omit_signing_key"]
    static let notificationActions = ["drop", "duplicate", "delay", "reorder", "once"]
    static let keys = ["target", "method", "path", "client_id", "grant_type", "type", "times", "always", "probability", "action", "status",
                       "headers", "body", "delay_ms", "after_bytes", "for_seconds", "incident"]

    /// A problem with a fault's JSON: the key at fault (nil: the whole value) and what was expected.
    package struct Problem: Error, Equatable, Sendable {
        package var key: String?
        package var message: String
    }

    /// Reads one fault; the first problem found is thrown.
    package init(json value: JSONValue) throws(Problem) {
        guard case .object(let object) = value else { throw Problem(key: nil, message: "expected an object") }
        for key in object.keys where !Self.keys.contains(key) {
            throw Problem(key: key, message: "unknown key (expected one of: \(Self.keys.joined(separator: ", ")))")
        }
        func string(_ key: String, maxBytes: Int = 1024) throws(Problem) -> String? {
            guard let value = object[key], value != .null else { return nil }
            guard case .string(let text) = value, text.utf8.count <= maxBytes else {
                throw Problem(key: key, message: "expected a string of at most \(maxBytes) bytes")
            }
            return text
        }
        func int(_ key: String, _ range: ClosedRange<Int>) throws(Problem) -> Int? {
            guard let value = object[key], value != .null else { return nil }
            guard case .int(let number) = value, number >= Int64(range.lowerBound), number <= Int64(range.upperBound) else {
                throw Problem(key: key, message: "expected an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(number)
        }
        let targetName = try string("target") ?? "http"
        let actionName = try string("action")
        let notifications: Bool
        switch targetName {
        case "http": notifications = false
        case "notifications": notifications = true
        default: throw Problem(key: "target", message: "expected \"http\" or \"notifications\", found \"\(targetName.prefix(40))\"")
        }
        let allowed = notifications ? Self.notificationActions : Self.httpActions
        guard let actionName else {
            throw Problem(key: "action", message: "missing required key (expected one of: \(allowed.joined(separator: ", ")))")
        }
        guard allowed.contains(actionName) else {
            throw Problem(key: "action", message: "expected one of \(allowed.joined(separator: ", ")) for target \(targetName), found \"\(actionName.prefix(40))\"")
        }
        let clientID = try string("client_id")
        if notifications {
            for key in ["method", "path", "grant_type", "status", "headers", "body", "after_bytes"] where object[key] != nil {
                throw Problem(key: key, message: "not a key of a notifications fault")
            }
            var type = try string("type")
            // Apple's wire name for a deletion (compatibility.account_deletion_event_type) names it too.
            if type == "account-deleted" { type = AccountEventType.accountDelete.rawValue }
            if let type, !AccountEventType.allCases.contains(where: { $0.rawValue == type }) {
                throw Problem(key: "type", message: "expected one of \(AccountEventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            target = .notifications(type: type, clientID: clientID)
        } else {
            if object["type"] != nil { throw Problem(key: "type", message: "not a key of an http fault (for target notifications)") }
            guard let path = try string("path") else {
                throw Problem(key: "path", message: "missing required key (one of Apple's routes: \(Self.appleRoutes.map(\.path).joined(separator: ", ")))")
            }
            guard let route = Self.appleRoutes.first(where: { $0.path == path }) else {
                let why = path.hasPrefix("/__mock") ? "faults act on Apple's routes, never the control API" : "not one of Apple's routes"
                throw Problem(key: "path", message: "\(why): expected one of \(Self.appleRoutes.map(\.path).joined(separator: ", "))")
            }
            var method: HTTPMethod?
            if let name = try string("method") {
                guard let known = route.methods.first(where: { $0.rawValue == name.uppercased() }) else {
                    throw Problem(key: "method", message: "\(path) takes \(route.methods.map(\.rawValue).joined(separator: " or ")), not \(name.prefix(20))")
                }
                method = known
            }
            target = .http(method: method, path: path, clientID: clientID, grantType: try string("grant_type"))
        }
        let given = ["times", "always", "probability"].filter { object[$0] != nil && object[$0] != .null }
        guard given.count <= 1 else { throw Problem(key: given[1], message: "give one of times, always or probability") }
        if let count = try int("times", 1...Self.maxTimes) {
            firing = .times(count)
        } else if let value = object["probability"], value != .null {
            let probability: Double
            switch value {
            case .int(let number): probability = Double(number)
            case .double(let number): probability = number
            default: throw Problem(key: "probability", message: "expected a number from 0 to 1")
            }
            guard probability >= 0 && probability <= 1 else { throw Problem(key: "probability", message: "expected a number from 0 to 1, found \(probability)") }
            firing = .probability(probability)
        } else {
            if let value = object["always"], value != .null, value != .bool(true) {
                throw Problem(key: "always", message: "expected true (or leave it out: a fault without times or probability always fires)")
            }
            firing = .always
        }
        delayMilliseconds = try int("delay_ms", 0...HTTPDelivery.maximumDelayMilliseconds) ?? 0
        if actionName == "delay" && delayMilliseconds == 0 {
            throw Problem(key: "delay_ms", message: "missing: a delay needs delay_ms from 1 to \(HTTPDelivery.maximumDelayMilliseconds)")
        }
        forSeconds = try int("for_seconds", 1...Self.maxForSeconds)
        if let name = try string("incident", maxBytes: 64) {
            guard FaultIncident(rawValue: name) != nil else {
                throw Problem(key: "incident", message: "expected one of \(FaultIncident.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            incident = name
        }
        if actionName == "omit_signing_key", case .http(_, let path, _, _) = target, path != "/auth/keys" {
            throw Problem(key: "action", message: "omit_signing_key acts on /auth/keys only")
        }
        let afterBytes = try int("after_bytes", 0...Int(Int32.max))
        if afterBytes != nil && actionName != "truncate" && actionName != "stall" {
            throw Problem(key: "after_bytes", message: "only for truncate and stall")
        }
        if actionName != "respond" {
            for key in ["status", "headers", "body"] where object[key] != nil {
                throw Problem(key: key, message: "only for action respond")
            }
        }
        switch actionName {
        case "respond":
            guard let status = try int("status", 200...599) else { throw Problem(key: "status", message: "missing required key (200 to 599)") }
            var headers: [(String, String)] = []
            if let value = object["headers"], value != .null {
                guard case .object(let fields) = value, fields.count <= Self.maxHeaders else {
                    throw Problem(key: "headers", message: "expected an object of at most \(Self.maxHeaders) string values")
                }
                for (name, value) in fields {
                    guard case .string(let text) = value, text.utf8.count <= 8192 else {
                        throw Problem(key: "headers", message: "\(name.prefix(40)): expected a string of at most 8192 bytes")
                    }
                    headers.append((name, text))
                }
            }
            let body = try string("body", maxBytes: Self.maxBodyBytes) ?? ""
            var probe = HTTPResponse(status: HTTPStatus(status), body: Array(body.utf8))
            for (name, value) in headers { probe.headers.add(name, value) }
            if let defect = HTTPResponseSerializer.defect(of: probe) {
                throw Problem(key: defect.contains("header") ? "headers" : "body", message: "cannot be sent: \(defect)")
            }
            action = .respond(status: status, headers: headers, body: body)
        case "delay": action = .delay
        case "close": action = .close
        case "reset": action = .reset
        case "truncate": action = .truncate(afterBytes: afterBytes ?? 0)
        case "stall": action = .stall(afterBytes: afterBytes ?? 0)
        case "drop": action = .drop
        case "duplicate": action = .duplicate
        case "omit_signing_key": action = .omitSigningKey
        case "once": action = .once
        default: action = .reorder
        }
    }

    /// The fault as JSON, every key it uses written out; `init(json:)` reads it back equal.
    package var json: JSONObject {
        var object = JSONObject()
        switch target {
        case .http(let method, let path, let clientID, let grantType):
            object["target"] = "http"
            if let method { object["method"] = .string(method.rawValue) }
            object["path"] = .string(path)
            if let clientID { object["client_id"] = .string(clientID) }
            if let grantType { object["grant_type"] = .string(grantType) }
        case .notifications(let type, let clientID):
            object["target"] = "notifications"
            if let type { object["type"] = .string(type) }
            if let clientID { object["client_id"] = .string(clientID) }
        }
        switch firing {
        case .always: object["always"] = true
        case .times(let count): object["times"] = .int(Int64(count))
        case .probability(let probability): object["probability"] = .double(probability)
        }
        object["action"] = .string(action.name)
        switch action {
        case .respond(let status, let headers, let body):
            object["status"] = .int(Int64(status))
            object["headers"] = .object(JSONObject(headers.map { ($0.0, JSONValue.string($0.1)) }))
            object["body"] = .string(body)
        case .truncate(let count), .stall(let count):
            object["after_bytes"] = .int(Int64(count))
        default:
            break
        }
        if delayMilliseconds > 0 { object["delay_ms"] = .int(Int64(delayMilliseconds)) }
        if let forSeconds { object["for_seconds"] = .int(Int64(forSeconds)) }
        if let incident { object["incident"] = .string(incident) }
        return object
    }

    package static func == (lhs: FaultSpec, rhs: FaultSpec) -> Bool {
        lhs.target == rhs.target && lhs.action == rhs.action && lhs.firing == rhs.firing && lhs.delayMilliseconds == rhs.delayMilliseconds
            && lhs.forSeconds == rhs.forSeconds && lhs.incident == rhs.incident
    }
}
