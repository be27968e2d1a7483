import JOSE

/// What would make the mock answer as Apple did: a scenario knob (docs/scenario.md), or where
/// none models the difference, a serve option or one of the mock's incident presets.
enum ConformanceKnob: Sendable, Equatable {
    /// `compatibility.<name>` set to the value.
    case compatibility(String, JSONValue)
    /// A scenario key outside `compatibility`, by its path.
    case scenario([String], JSONValue)
    /// An option of `appleid-mock serve`.
    case serveOption(String)
    /// An incident preset (`appleid-mock faults incident NAME`) that replays the answer.
    case incident(String)

    /// The knob in words, for the report.
    var description: String {
        switch self {
        case .compatibility(let name, let value): "scenario compatibility.\(name) = \(Self.json(value))"
        case .scenario(let path, let value): "scenario \(path.joined(separator: ".")) = \(Self.json(value))"
        case .serveOption(let option): "serve \(option) (no scenario knob)"
        case .incident(let name): "faults incident \(name) replays it (no scenario knob)"
        }
    }

    private static func json(_ value: JSONValue) -> String { String(decoding: JSONWriter.compact(value), as: UTF8.self) }

    /// The scenario fragment that sets every knob of `knobs` that is a scenario key.
    static func fragment(_ knobs: [ConformanceKnob]) -> JSONObject? {
        var fragment = JSONObject()
        for knob in knobs {
            switch knob {
            case .compatibility(let name, let value):
                var compatibility = fragment["compatibility"]?.objectValue ?? JSONObject()
                compatibility[name] = value
                fragment["compatibility"] = .object(compatibility)
            case .scenario(let path, let value):
                fragment = setting(fragment, path[...], to: value)
            case .serveOption, .incident:
                continue
            }
        }
        return fragment.isEmpty ? nil : fragment
    }

    private static func setting(_ object: JSONObject, _ path: ArraySlice<String>, to value: JSONValue) -> JSONObject {
        guard let first = path.first else { return object }
        var object = object
        object[first] = path.count == 1 ? value : .object(setting(object[first]?.objectValue ?? JSONObject(), path.dropFirst(), to: value))
        return object
    }

    /// The knobs that model the differences between the mock's and Apple's parts of `probe`.
    static func knobs(for probe: ConformanceProbe, mock: ConformanceParts, apple: ConformanceParts, differing: Set<String>) -> [ConformanceKnob] {
        var knobs: [ConformanceKnob] = []
        switch probe.kind {
        case .keys:
            // apple-behaviour.md §1.5: the value of Apple's Cache-Control is the knob's to pick.
            if differing.contains("Cache-Control") {
                knobs.append(.compatibility("jwks_cache_control", apple["Cache-Control"].map(JSONValue.string) ?? .null))
            }
            if differing.contains("keys count"), let count = apple["keys count"].flatMap({ Int($0) }), (1...10).contains(count) {
                knobs.append(.scenario(["signing_keys", "count"], .int(Int64(count))))
            }
        case .oauthError:
            // §1.3: a JSON body is invalid_client (observed) or invalid_request (TN3107).
            if probe.contentType == "application/json", differing.contains("body"),
               case .object(let body)? = try? JSONParser.parse(apple["body"] ?? ""),
               let error = body["error"]?.stringValue, ["invalid_client", "invalid_request"].contains(error),
               case .object(let mockBody)? = try? JSONParser.parse(mock["body"] ?? ""), mockBody["error"]?.stringValue != error {
                knobs.append(.compatibility("token_json_body_error", .string(error)))
            }
        case .authorizeError:
            // §2.2: Apple's page or TN3107's JSON, with a status that is unconfirmed.
            if differing.contains("body format"), let format = apple["body format"] {
                if format == "JSON" { knobs.append(.compatibility("authorize_error_format", "json")) }
                if format == "HTML page" { knobs.append(.compatibility("authorize_error_format", "page")) }
            }
            if differing.contains("status"), apple["Location"] == nil, let status = apple["status"].flatMap({ Int($0) }),
               (200...599).contains(status), ![204, 205, 304].contains(status) {
                knobs.append(.compatibility("authorize_error_status", .int(Int64(status))))
            }
        case .discovery:
            // §12: the June 2025 flip, a redirect to account.apple.com or its document served.
            let issuer = (try? JSONParser.parse(apple["body.issuer"] ?? ""))?.stringValue
            if (apple["Location"] ?? "").hasPrefix("https://account.apple.com/") || issuer == "https://account.apple.com" {
                knobs.append(.incident("discovery-issuer-flip"))
            } else if differing.contains("body.issuer"), let issuer, issuer.hasPrefix("https://") {
                knobs.append(.serveOption("--issuer \(issuer)"))
            }
        }
        return knobs
    }
}
