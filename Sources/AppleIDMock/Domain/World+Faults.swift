import JOSE
import MiniHTTP

extension World {
    // MARK: - Faults (installed, removed and fired as events: part of the world)

    /// Installs `specs` together (one fault, or an incident's), all or none; refused beyond
    /// `FaultSpec.maxCount` faults at once.
    func installFaults(_ specs: [FaultSpec], now: Int64, _ changes: inout WorldChanges) throws(FaultTableFull) -> [InstalledFault] {
        guard faults.installed.count + specs.count <= FaultSpec.maxCount else { throw FaultTableFull() }
        let installed = specs.enumerated().map { InstalledFault(number: faults.nextNumber + $0.offset, spec: $0.element, now: now) }
        changes.emit(.faultsInstalled(installed))
        return installed
    }

    /// Removes the fault with `id`; returns it as it was.
    func removeFault(_ id: String, _ changes: inout WorldChanges) throws(FaultUnknown) -> InstalledFault {
        guard let fault = faults.fault(id) else { throw FaultUnknown(id: id) }
        changes.emit(.faultsRemoved(ids: [id]))
        return fault
    }

    /// Removes every fault, or every fault `incident` installed; returns how many.
    func removeFaults(incident: FaultIncident?, _ changes: inout WorldChanges) -> Int {
        let ids = faults.installed.filter { incident == nil || $0.spec.incident == incident?.rawValue }.map(\.id)
        if !ids.isEmpty { changes.emit(.faultsRemoved(ids: ids)) }
        return ids.count
    }

    /// The event that ends the faults whose `for_seconds` is over at `now`, when there are any: an
    /// ended fault is gone, so moving the clock back does not revive it.
    func endedFaults(now: Int64) -> DomainEvent? {
        let ids = faults.installed.filter { fault in fault.until.map { now >= $0 } ?? false }.map(\.id)
        return ids.isEmpty ? nil : .faultsRemoved(ids: ids)
    }

    /// The fault that fires for `target` (`POST /auth/token`, `notification consent-revoked`)
    /// among those `matches` accepts, if one does: the first that matches, is still within its
    /// `for_seconds`, has firings left, and wins its probability draw. Its `fault-fired` event
    /// carries its counts after firing.
    func fireFault(target: String, now: Int64, _ changes: inout WorldChanges, matching matches: (FaultSpec) -> Bool) -> InstalledFault? {
        for fault in faults.installed where matches(fault.spec) {
            if let until = fault.until, now >= until { continue }
            switch fault.spec.firing {
            case .always:
                break
            case .times:
                guard let left = fault.remaining, left > 0 else { continue }
            case .probability(let probability):
                // 53 random bits: a uniform double in [0, 1).
                let bits = changes.faultRandom.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 11
                guard Double(bits) / 9_007_199_254_740_992 < probability else { continue }
            }
            var fired = fault
            fired.fired += 1
            fired.remaining = fired.remaining.map { $0 - 1 }
            changes.emit(.faultFired(FaultFiring(faultID: fault.id, action: fault.spec.action.name, target: target, fired: fired.fired,
                                                 remaining: fired.remaining)))
            return fired
        }
        return nil
    }

    /// The fault that acts on the notification of `type` to `groupID`, when the app group would
    /// be sent one (`notificationURL`): a notification that goes nowhere meets no fault.
    func notificationFault(type: AccountEventType, groupID: String, teamID: String, now: Int64,
                           _ changes: inout WorldChanges) -> NotificationFault? {
        guard faults.counts.notifications > 0,
              let team = context.scenario.teams.first(where: { $0.teamID == teamID }),
              context.scenario.notificationURL(group: groupID, team: team) != nil else { return nil }
        let fired = fireFault(target: "notification \(type.rawValue)", now: now, &changes) { spec in
            guard case .notifications(let wanted, let client) = spec.target else { return false }
            return (wanted == nil || wanted == type.rawValue) && (client == nil || client == groupID)
        }
        return fired.map { NotificationFault(faultID: $0.id, action: $0.spec.action.name, delayMilliseconds: $0.spec.delayMilliseconds) }
    }

    /// Applies a fault event to the table (`World.apply`).
    mutating func applyFault(_ event: DomainEvent) {
        switch event {
        case .faultsInstalled(let installed):
            faults.installed += installed
            faults.nextNumber = max(faults.nextNumber, (installed.map(\.number).max() ?? 0) + 1)
        case .faultsRemoved(let ids):
            faults.installed.removeAll { ids.contains($0.id) }
        case .faultFired(let firing):
            guard let index = faults.installed.firstIndex(where: { $0.id == firing.faultID }) else { return }
            // A file written before firings carried their counts: counted here.
            faults.installed[index].fired = firing.fired ?? faults.installed[index].fired + 1
            faults.installed[index].remaining = firing.fired == nil ? faults.installed[index].remaining.map { max(0, $0 - 1) } : firing.remaining
        default:
            break
        }
    }
}

/// The fault that acted on an account event's notification: which, what it does, and its delay.
struct NotificationFault: Sendable, Equatable {
    /// The fault's id (`f1`, …).
    var faultID: String
    /// Its action's name (`drop`, `duplicate`, `delay`, `reorder`, `once`).
    package var action: String
    /// Milliseconds the notification waits before its first attempt.
    var delayMilliseconds: Int
}
