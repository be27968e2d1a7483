/// Authorization codes issued and not yet redeemed, with their expiries in a min-heap: finding
/// and dropping the expired ones, which the state owner does once a mock second inside the
/// operation that runs then, costs what expired (O(k log n)), not a look at every pending code
/// and a copy of the rest (with 60,000 unredeemed codes that was a pass over all of
/// them under the state lock every second). The heap's entries go stale when their code is
/// redeemed; whoever reads one checks it against the code's grant, and the heap is rebuilt
/// when stale entries outnumber live ones.
struct PendingCodes: Sendable {
    /// The grant of each pending code.
    private(set) var grants: [String: AuthorizationGrant] = [:]
    /// (expiry, code), earliest first at index 0.
    private var expiries: [(expiresAt: Int64, code: String)] = []

    /// The grant of a pending code.
    subscript(code: String) -> AuthorizationGrant? { grants[code] }

    /// Pending codes.
    var count: Int { grants.count }

    /// Keeps `code` pending with `grant` (another grant of the same code is replaced).
    mutating func insert(_ code: String, _ grant: AuthorizationGrant) {
        let replaced = grants.updateValue(grant, forKey: code) != nil
        if replaced {
            // The old entry would count the code twice: rebuilt (a code is drawn unique; this is rare).
            rebuild()
        } else {
            push((grant.expiresAt, code))
        }
    }

    /// Forgets `code` (redeemed).
    mutating func remove(_ code: String) {
        guard grants.removeValue(forKey: code) != nil else { return }
        if expiries.count > 2 * grants.count + 1024 { rebuild() }
    }

    /// How many pending codes have expired by `now`: only the heap's entries at or before `now`
    /// are looked at.
    func expiredCount(by now: Int64) -> Int {
        var count = 0
        var stack = expiries.isEmpty ? [] : [0]
        while let index = stack.popLast() {
            let entry = expiries[index]
            guard entry.expiresAt <= now else { continue }
            if grants[entry.code]?.expiresAt == entry.expiresAt { count += 1 }
            if 2 * index + 1 < expiries.count { stack.append(2 * index + 1) }
            if 2 * index + 2 < expiries.count { stack.append(2 * index + 2) }
        }
        return count
    }

    /// Drops every code that expired by `at`.
    mutating func removeExpired(by at: Int64) {
        while let first = expiries.first, first.expiresAt <= at {
            popFirst()
            if let grant = grants[first.code], grant.expiresAt <= at { grants[first.code] = nil }
        }
    }

    // MARK: - Heap

    private mutating func rebuild() {
        expiries = grants.map { ($0.value.expiresAt, $0.key) }
        var parent = expiries.count / 2 - 1
        while parent >= 0 {
            siftDown(parent)
            parent -= 1
        }
    }

    private mutating func push(_ entry: (expiresAt: Int64, code: String)) {
        expiries.append(entry)
        var child = expiries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard expiries[child].expiresAt < expiries[parent].expiresAt else { break }
            expiries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = expiries.removeLast()
        guard !expiries.isEmpty else { return }
        expiries[0] = last
        siftDown(0)
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < expiries.count && expiries[left].expiresAt < expiries[smallest].expiresAt { smallest = left }
            if right < expiries.count && expiries[right].expiresAt < expiries[smallest].expiresAt { smallest = right }
            guard smallest != parent else { return }
            expiries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
