import JOSE

/// A fault as installed: its id (`f1`, …), what it says, how often it fired, the firings left
/// for a `times` fault, and the mock time a `for_seconds` fault stops acting at.
public struct InstalledFault: Sendable, Equatable {
    /// `f1`, `f2`, … in the order installed since start or the last reset.
    public let id: String
    /// What it matches and does.
    let spec: FaultSpec
    /// Firings left for a `times` fault; nil for the others.
    public internal(set) var remaining: Int?
    /// How often it fired.
    public internal(set) var fired = 0
    /// Mock time it stops acting, for a `for_seconds` fault (its install time plus those).
    package internal(set) var until: Int64?

    /// `spec` installed as `f<number>` at mock time `now`.
    init(number: Int, spec: FaultSpec, now: Int64) {
        id = "f\(number)"
        self.spec = spec
        remaining = if case .times(let count) = spec.firing { count } else { nil }
        until = spec.forSeconds.map { now &+ Int64($0) }
    }

    /// A fault exactly as a state file kept it.
    init(id: String, spec: FaultSpec, remaining: Int?, fired: Int, until: Int64?) {
        self.id = id
        self.spec = spec
        self.remaining = remaining
        self.fired = fired
        self.until = until
    }

    /// The number in its id (`f12` is 12).
    var number: Int { Int(id.dropFirst()) ?? 0 }

    /// Whether it acts on a request to one of Apple's routes.
    var actsOnRequests: Bool { if case .http = spec.target { true } else { false } }

    /// `{"id", "fired", "remaining", "until", …the spec}`.
    package var json: JSONObject {
        var object = JSONObject()
        object["id"] = .string(id)
        for (key, value) in spec.json { object[key] = value }
        object["fired"] = .int(Int64(fired))
        object["remaining"] = remaining.map { .int(Int64($0)) } ?? .null
        object["until"] = until.map { .string(RFC3339.format($0)) } ?? .null
        return object
    }
}
