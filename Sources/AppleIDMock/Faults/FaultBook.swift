import JOSE
import MiniHTTP
import Synchronization

/// The faults installed now — the scenario's, then those added at run time — and which fire.
/// Matching takes one lock; a mock without faults pays one relaxed atomic load per request.
/// Draws for `probability` come from the fault stream, derived from `--seed` when seeded, and
/// happen only for requests a probability fault matches, in the order they arrive: the same
/// requests under the same seed fire the same faults.
final class FaultBook: Sendable {
    /// A fault as installed: its id, what it says, and how often it has fired.
    struct Installed: Sendable {
        let id: String
        let spec: FaultSpec
        /// Firings left for a `times` fault; nil for the others.
        var remaining: Int?
        var fired = 0
        /// Mock time it stops acting, for a `for_seconds` fault (its install time plus those).
        var until: Int64?

        /// `{"id", "fired", "remaining", "until", …the spec}`.
        var json: JSONObject {
            var object = JSONObject()
            object["id"] = .string(id)
            for (key, value) in spec.json { object[key] = value }
            object["fired"] = .int(Int64(fired))
            object["remaining"] = remaining.map { .int(Int64($0)) } ?? .null
            object["until"] = until.map { .string(RFC3339.format($0)) } ?? .null
            return object
        }
    }

    /// A fault that fired: what to do.
    struct Firing: Sendable {
        let id: String
        let spec: FaultSpec
        /// What it acted on (`POST /auth/token`, `notification consent-revoked`).
        let target: String
        /// The `fault-fired` event's sequence number, once recorded.
        let event: UInt64?
    }

    /// No room for another fault.
    struct Full: Error {}

    private struct State {
        var faults: [Installed] = []
        var nextID = 1
        var random: SeededRandom
    }

    private let state: Mutex<State>
    private let httpFaults = Atomic<Int>(0)
    private let notificationFaults = Atomic<Int>(0)
    private let timedFaults = Atomic<Int>(0)
    private let initial: [FaultSpec]
    private let seed: SeededRandom?
    private let mockState: MockState

    /// The scenario's faults, drawing from `seed` (system entropy when nil); events go to `mockState`.
    init(scenario faults: [FaultSpec], seed: SeededRandom?, state mockState: MockState) {
        initial = Array(faults.prefix(FaultSpec.maxCount))
        self.seed = seed
        self.mockState = mockState
        state = Mutex(State(random: seed ?? SeededRandom(entropy: SecureRandom.bytes(32))))
        reset()
    }

    /// Back to the scenario's faults, numbered from `f1` again, and the stream from its start.
    func reset() {
        let random = seed ?? SeededRandom(entropy: SecureRandom.bytes(32))
        let now = mockState.now
        state.withLock { state in
            state = State(random: random)
            for spec in initial { _ = Self.install(spec, now: now, into: &state) }
            recount(state)
        }
    }

    private static func install(_ spec: FaultSpec, now: Int64, into state: inout State) -> Installed {
        let remaining: Int? = if case .times(let count) = spec.firing { count } else { nil }
        var installed = Installed(id: "f\(state.nextID)", spec: spec, remaining: remaining)
        installed.until = spec.forSeconds.map { now &+ Int64($0) }
        state.nextID += 1
        state.faults.append(installed)
        return installed
    }

    private func recount(_ state: State) {
        let http = state.faults.count { if case .http = $0.spec.target { true } else { false } }
        httpFaults.store(http, ordering: .relaxed)
        notificationFaults.store(state.faults.count - http, ordering: .relaxed)
        timedFaults.store(state.faults.count { $0.until != nil }, ordering: .relaxed)
    }

    /// Installs `spec`; `Full` beyond `FaultSpec.maxCount` faults.
    func add(_ spec: FaultSpec) throws(Full) -> Installed {
        try add([spec])[0]
    }

    /// Installs `specs` together (an incident's), all or none; `Full` when they do not fit
    /// within `FaultSpec.maxCount` faults.
    func add(_ specs: [FaultSpec]) throws(Full) -> [Installed] {
        let now = mockState.now
        return try state.withLock { state throws(Full) in
            guard state.faults.count + specs.count <= FaultSpec.maxCount else { throw Full() }
            let installed = specs.map { Self.install($0, now: now, into: &state) }
            recount(state)
            return installed
        }
    }

    /// Every installed fault, in the order they match.
    var all: [Installed] { state.withLock { $0.faults } }

    /// The fault with `id`.
    func fault(_ id: String) -> Installed? { state.withLock { state in state.faults.first { $0.id == id } } }

    /// Removes the fault with `id`; nil when there is none.
    func remove(_ id: String) -> Installed? {
        state.withLock { state in
            guard let index = state.faults.firstIndex(where: { $0.id == id }) else { return nil }
            defer { recount(state) }
            return state.faults.remove(at: index)
        }
    }

    /// Removes every fault, or every fault of `incident`; returns how many went.
    func removeAll(incident: FaultIncident? = nil) -> Int {
        state.withLock { state in
            let before = state.faults.count
            state.faults.removeAll { incident == nil || $0.spec.incident == incident?.rawValue }
            recount(state)
            return before - state.faults.count
        }
    }

    /// The kid that signs now (what `omit_signing_key` leaves out of `/auth/keys`).
    var signingKeyID: String? { mockState.signingKeyID }

    /// Whether any fault acts on requests (a relaxed load: the check every Apple request makes).
    var actsOnRequests: Bool { httpFaults.load(ordering: .relaxed) > 0 }

    /// Whether any fault acts on notifications.
    var actsOnNotifications: Bool { notificationFaults.load(ordering: .relaxed) > 0 }

    /// The fault that fires for `request`, if one does (recorded as a `fault-fired` event).
    func fire(for request: HTTPRequest) -> Firing? {
        guard actsOnRequests else { return nil }
        var fields: [String: String]?
        // client_id and grant_type are read from the form (POST) or the query (GET), once, and
        // only when a fault asks for them.
        func field(_ name: String) -> String? {
            if fields == nil {
                let bytes = request.method == .post ? request.body : Array((request.query ?? "").utf8)
                let form = (try? HTTPForm(decoding: bytes)) ?? HTTPForm()
                fields = ["client_id": form["client_id"] ?? "", "grant_type": form["grant_type"] ?? ""]
            }
            return fields?[name]
        }
        return fire(target: "\(request.method.rawValue) \(request.path)") { spec in
            guard case .http(let method, let path, let clientID, let grantType) = spec.target, path == request.path else { return false }
            if let method, method != request.method && !(method == .get && request.method == .head) { return false }
            if let clientID, field("client_id") != clientID { return false }
            if let grantType, field("grant_type") != grantType { return false }
            return true
        }
    }

    /// The fault that fires for a notification about `type` to the app group `clientID`, if one
    /// does. Without `recordingEvent`, the caller records its event (`record`) when it can.
    func fire(notification type: String, clientID: String?, recordingEvent: Bool = true) -> Firing? {
        guard actsOnNotifications else { return nil }
        return fire(target: "notification \(type)", recordingEvent: recordingEvent) { spec in
            guard case .notifications(let wanted, let client) = spec.target else { return false }
            return (wanted == nil || wanted == type) && (client == nil || client == clientID)
        }
    }

    private func fire(target: String, recordingEvent: Bool = true, matching matches: (FaultSpec) -> Bool) -> Firing? {
        // Mock time, for faults that act for a while: read before this book's lock.
        let now = timedFaults.load(ordering: .relaxed) > 0 ? mockState.now : nil
        let fired: (id: String, spec: FaultSpec)? = state.withLock { state in
            for index in state.faults.indices where matches(state.faults[index].spec) {
                if let until = state.faults[index].until, let now, now >= until { continue }
                switch state.faults[index].spec.firing {
                case .always:
                    break
                case .times:
                    guard let left = state.faults[index].remaining, left > 0 else { continue }
                    state.faults[index].remaining = left - 1
                case .probability(let probability):
                    // 53 random bits: a uniform double in [0, 1).
                    let bits = state.random.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 11
                    guard Double(bits) / 9_007_199_254_740_992 < probability else { continue }
                }
                state.faults[index].fired += 1
                return (state.faults[index].id, state.faults[index].spec)
            }
            return nil
        }
        guard let fired else { return nil }
        let firing = Firing(id: fired.id, spec: fired.spec, target: target, event: nil)
        return recordingEvent ? record(firing) : firing
    }

    /// Records `firing`'s `fault-fired` event; returns it with the event's sequence number.
    @discardableResult
    func record(_ firing: Firing) -> Firing {
        let event = FaultFiring(faultID: firing.id, action: firing.spec.action.name, target: firing.target)
        let recorded = mockState.perform { _, _, changes in changes.emit(.faultFired(event)) }.1
        return Firing(id: firing.id, spec: firing.spec, target: firing.target, event: recorded.last?.sequence)
    }
}
