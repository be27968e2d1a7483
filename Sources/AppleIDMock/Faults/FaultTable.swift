import JOSE

/// The faults installed now — the scenario's, then those added at run time, in the order they
/// match — part of the world: installing, removing and firing are events, so a reset and a
/// restart rebuild them. Probability draws come from `random`, a stream of its own (derived from
/// `--seed`): the same requests under the same seed fire the same faults, and a run without
/// faults draws nothing from it.
struct FaultTable: Sendable {
    /// The faults, in the order they match.
    var installed: [InstalledFault] = []
    /// The number of the next fault's id.
    var nextNumber = 1
    /// Where probability draws come from.
    var random: SeededRandom

    /// The scenario's faults installed at mock time `now`, numbered from `f1`.
    init(scenario faults: [FaultSpec], now: Int64, random: SeededRandom) {
        self.random = random
        for spec in faults.prefix(FaultSpec.maxCount) {
            installed.append(InstalledFault(number: nextNumber, spec: spec, now: now))
            nextNumber += 1
        }
    }

    /// The fault with `id`.
    func fault(_ id: String) -> InstalledFault? { installed.first { $0.id == id } }

    /// How many act on requests, and how many on notifications.
    var counts: (requests: Int, notifications: Int) {
        let requests = installed.count { $0.actsOnRequests }
        return (requests, installed.count - requests)
    }
}

/// No room for more faults (`FaultSpec.maxCount` at once).
struct FaultTableFull: Error, Equatable {}

/// No installed fault has the id.
struct FaultUnknown: Error, Equatable {
    /// The id asked for.
    package let id: String
}
