import JOSE

/// What an operation decided: the events to apply when it succeeds, and the random stream as it
/// stands after the operation's draws (kept only when it succeeds, so a refused operation draws
/// nothing either).
struct WorldChanges: Sendable {
    /// The events, in the order they apply.
    private(set) var events: [DomainEvent] = []
    /// The operation's random stream.
    var random: RandomSource
    /// The stream fault probabilities are drawn from (apart, so a run's codes are the same with
    /// faults installed or not).
    var faultRandom: SeededRandom
    /// Mock now with fractions as the operation began (millisecond event times).
    var preciseNow: Double = 0
    /// Real time the operation runs at (what clock changes are made against).
    var real: Double = 0

    /// Changes starting from `world`'s stream.
    init(_ world: World) {
        random = world.random
        faultRandom = world.faults.random
    }

    /// Decides an event.
    mutating func emit(_ event: DomainEvent) {
        events.append(event)
    }
}
