import Synchronization

extension AppleIDDomain {
    // MARK: - Faults (apple-behaviour.md §12: Apple's incidents as presets)

    /// Installs `specs` together (a fault, or an incident's faults), all or none; refused when
    /// they would pass `FaultSpec.maxCount` faults at once.
    func installFaults(_ specs: [FaultSpec]) throws(FaultTableFull) -> [InstalledFault] {
        try owner.perform { world, now, changes throws(FaultTableFull) in try world.installFaults(specs, now: now, &changes) }.0
    }

    /// Removes the fault with `id`; returns it as it was.
    func removeFault(_ id: String) throws(FaultUnknown) -> InstalledFault {
        try owner.perform { world, _, changes throws(FaultUnknown) in try world.removeFault(id, &changes) }.0
    }

    /// Removes every fault, or every fault `incident` installed; returns how many went.
    @discardableResult
    func removeFaults(incident: FaultIncident? = nil) -> Int {
        owner.perform { world, _, changes in world.removeFaults(incident: incident, &changes) }.0
    }

    /// Every installed fault, in the order they match; those whose time is over have ended first
    /// (the passing of time runs before the read).
    package var faults: [InstalledFault] { owner.perform { world, _, _ in world.faults.installed }.0 }

    /// Whether any fault acts on requests to Apple's routes: a relaxed load, the check every
    /// Apple request makes before anything else.
    var faultsActOnRequests: Bool { faultCounts.requests.load(ordering: .relaxed) > 0 }

    /// The fault that fires for a request `method path` whose form (or query) says `clientID`
    /// and `grantType` (read by `fields` only when a fault needs them), recorded as its
    /// `fault-fired` event; with that event's sequence number.
    func fireRequestFault(method: String, path: String, fields: () -> (clientID: String?, grantType: String?))
        -> (fault: InstalledFault, event: UInt64?)? {
        guard faultsActOnRequests else { return nil }
        let (clientID, grantType) = fields()
        let (fired, recorded) = owner.perform { world, now, changes in
            world.fireFault(target: "\(method) \(path)", now: now, &changes) { spec in
                guard case .http(let wanted, let route, let client, let grant) = spec.target, route == path else { return false }
                if let wanted, wanted.rawValue != method && !(wanted == .get && method == "HEAD") { return false }
                if let client, clientID != client { return false }
                if let grant, grantType != grant { return false }
                return true
            }
        }
        guard let fired else { return nil }
        let event = recorded.last { if case .faultFired(let firing) = $0.event { firing.faultID == fired.id } else { false } }
        return (fired, event?.sequence)
    }
}

/// How many installed faults act on requests and on notifications, kept current after every
/// operation (a subscriber of the state owner), so a request pays one relaxed load when none do.
final class FaultCounts: Sendable {
    /// Faults on Apple's routes.
    let requests = Atomic<Int>(0)
    /// Faults on notification delivery.
    let notifications = Atomic<Int>(0)

    /// Stores `counts`.
    func store(_ counts: (requests: Int, notifications: Int)) {
        requests.store(counts.requests, ordering: .relaxed)
        notifications.store(counts.notifications, ordering: .relaxed)
    }
}
