import JOSE
import MiniHTTP

extension JournalEntry {
    /// The entry as `GET /__mock/requests` lists it (snake_case keys; every key always present).
    var json: JSONObject {
        var object = JSONObject()
        object["id"] = .int(Int64(clamping: id))
        object["time"] = .string(Self.timestamp(time))
        object["peer"] = peer.map { .string($0.description) } ?? .null
        object["tls"] = .bool(isTLS)
        object["control"] = .bool(isControl)
        object["method"] = method.map { .string($0.rawValue) } ?? .null
        object["path"] = path.map(JSONValue.string) ?? .null
        object["route"] = route.map(JSONValue.string) ?? .null
        object["query"] = .object(Self.fields(query))
        object["form"] = form.map { .object(Self.fields($0)) } ?? .null
        object["body"] = body.map(JSONValue.string) ?? .null
        object["body_truncated"] = .bool(bodyTruncated)
        var headerObject = JSONObject()
        for field in headers {
            let name = field.name.lowercased()
            if case .string(let earlier)? = headerObject[name] {
                headerObject[name] = .string(earlier + ", " + field.value)
            } else {
                headerObject[name] = .string(field.value)
            }
        }
        object["headers"] = .object(headerObject)
        object["client_id"] = clientID.map(JSONValue.string) ?? .null
        object["grant_type"] = grantType.map(JSONValue.string) ?? .null
        switch clientSecret {
        case .decoded(let header, let claims)?: object["client_secret"] = .object(["header": .object(header), "claims": .object(claims)])
        case .malformed(let reason)?: object["client_secret"] = .object(["malformed": .string(reason)])
        case nil: object["client_secret"] = .null
        }
        object["status"] = status.map { .int(Int64($0.code)) } ?? .null
        object["error"] = error.map(JSONValue.string) ?? .null
        object["reason"] = reason.map(JSONValue.string) ?? .null
        object["events"] = .array(events.map { .int(Int64(clamping: $0)) })
        if let fault {
            let parts = fault.split(separator: " ", maxSplits: 1).map(String.init)
            object["fault"] = .object(["id": .string(parts.first ?? fault), "action": .string(parts.count > 1 ? parts[1] : "")])
        } else {
            object["fault"] = .null
        }
        object["microseconds"] = .int(Int64(clamping: microseconds))
        object["response_bytes"] = .int(Int64(clamping: responseBytes))
        return object
    }

    /// Each name once: its value, or every value in order when it came more than once.
    private static func fields(_ form: HTTPForm) -> JSONObject {
        var object = JSONObject()
        for name in Set(form.pairs.map(\.name)) {
            let values = form.values(name)
            object[name] = values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
        }
        return object
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-23T22:05:01.123Z`.
    static func timestamp(_ time: Double) -> String {
        guard time.isFinite, time >= 0, time < 1e15 else { return RFC3339.format(0) }
        let whole = time.rounded(.down)
        let seconds = Int64(whole)
        let millis = max(0, min(999, Int((time - whole) * 1000)))
        let text = RFC3339.format(seconds)
        let digits = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return text.hasSuffix("Z") ? String(text.dropLast()) + ".\(digits)Z" : text
    }
}
