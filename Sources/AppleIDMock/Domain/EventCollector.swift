import Synchronization

/// Collects the sequence numbers of the events a request's operations record, for the request
/// journal: the route wrapper binds one to `current` around a handler, and `StateOwner.perform`
/// adds what each operation recorded (not what time alone brought before it). Work the handler
/// hands to the blocking-work thread carries the binding along.
final class EventCollector: Sendable {
    /// The collector of the request being handled here; nil when nothing journals it.
    @TaskLocal static var current: EventCollector?

    /// Most sequence numbers one request keeps (a reset or a busy clock move records many).
    static let limit = 1000

    private let collected = Mutex<[UInt64]>([])

    /// Adds `sequences`, keeping the first `limit`.
    func add<S: Sequence>(_ sequences: S) where S.Element == UInt64 {
        collected.withLock { kept in
            for sequence in sequences where kept.count < Self.limit { kept.append(sequence) }
        }
    }

    /// What was collected, in order.
    var sequences: [UInt64] { collected.withLock { $0 } }
}
