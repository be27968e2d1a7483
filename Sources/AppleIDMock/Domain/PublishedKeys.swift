import JOSE
import Synchronization

/// What `/auth/keys` serves and health names — the published keys' JWK fragments, oldest
/// first, and the kid that signs — kept apart from the state's lock: `/auth/keys`, the hottest
/// route, reads it without taking the world's lock or the clock. The state owner hands it a new
/// set whenever a key event changes the keys; with a state file, a set is served only once the
/// change that made it is committed (`CommitBarrier`), so a client never sees a key a restart
/// would forget. Under `--seed`, the order of each answer comes from a seeded stream, in request
/// order, and the state file's writer keeps where it stands.
final class PublishedKeys: Sendable {
    /// A key set as served.
    struct KeySet: Sendable {
        var fragments: [[UInt8]]
        var signingKeyID: String?
    }

    private struct Sets {
        var served: KeySet
        /// A set waiting for its change's commit: served once `through` is committed.
        var pending: (through: UInt64, keys: KeySet)?
    }

    private let sets: Mutex<Sets>
    /// With `--seed`: the stream `/auth/keys` draws its order from, in request order.
    private let order: Mutex<SeededRandom?>
    private let seeded: Bool

    /// The keys at start; `order` the seeded stream of orders (nil: each order from entropy).
    init(initial: KeySet, order: SeededRandom?) {
        sets = Mutex(Sets(served: initial))
        self.order = Mutex(order)
        seeded = order != nil
    }

    /// A new set made by changes counted through `through` (0: nothing to wait for).
    func update(_ keys: KeySet, through: UInt64) {
        sets.withLock { sets in
            if through == 0 {
                sets.served = keys
                sets.pending = nil
            } else {
                sets.pending = (through, keys)
            }
        }
    }

    /// Changes through `count` are committed: a set waiting for them is served.
    func committed(upTo count: UInt64) {
        sets.withLock { sets in
            guard let pending = sets.pending, pending.through <= count else { return }
            sets.served = pending.keys
            sets.pending = nil
        }
    }

    /// The kid that signs, as served.
    var signingKeyID: String? { sets.withLock { $0.served.signingKeyID } }

    /// Where the seeded order stream stands (seeded runs only), for the state file.
    var orderPosition: SeededRandom.Position? { order.withLock { $0?.position } }

    /// The JWK fragments as served, in a random order when `shuffled` (Apple's order changes
    /// between fetches, apple-behaviour.md §1.5); under `--seed`, the order comes from the seed.
    func fragments(shuffled: Bool) -> [[UInt8]] {
        var fragments = sets.withLock { $0.served.fragments }
        guard shuffled else { return fragments }
        if seeded, let draws = order.withLock({ $0?.bytes(fragments.count * 4) }) {
            // Fisher–Yates on the seeded draws (4 bytes each; the modulo bias is immaterial here).
            for index in stride(from: fragments.count - 1, to: 0, by: -1) {
                let draw = draws[index * 4..<index * 4 + 4].reduce(0) { $0 << 8 | Int($1) }
                fragments.swapAt(index, draw % (index + 1))
            }
        } else {
            fragments.shuffle()
        }
        return fragments
    }
}
