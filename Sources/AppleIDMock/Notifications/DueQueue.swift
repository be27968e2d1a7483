/// Pending deliveries by when they are due: a binary min-heap of (due time, record id), so the
/// workers take the next one in O(log n) instead of scanning the delivery log (every
/// event cost more as the log filled). Entries go stale when their record is claimed,
/// settled or rescheduled; whoever pops one checks it against the record.
struct DueQueue {
    private var heap: [(dueAt: Double, id: UInt64)] = []

    /// Entries, stale ones included.
    var count: Int { heap.count }

    /// The earliest entry, if any.
    var first: (dueAt: Double, id: UInt64)? { heap.first }

    /// Adds an entry.
    mutating func insert(dueAt: Double, id: UInt64) {
        heap.append((dueAt, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry.
    mutating func removeFirst() -> (dueAt: Double, id: UInt64)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        siftDown(from: 0)
        return first
    }

    /// Moves the entry at `index` down to where its children are no earlier.
    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && Self.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && Self.before(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Forgets every entry.
    mutating func removeAll() { heap.removeAll() }

    /// Holds exactly `entries` (stale ones dropped by the caller), in O(n).
    mutating func rebuild(_ entries: some Sequence<(dueAt: Double, id: UInt64)>) {
        heap = Array(entries)
        var parent = heap.count / 2 - 1
        while parent >= 0 {
            siftDown(from: parent)
            parent -= 1
        }
    }

    /// Earlier due time first; the older record first among equals.
    private static func before(_ a: (dueAt: Double, id: UInt64), _ b: (dueAt: Double, id: UInt64)) -> Bool {
        a.dueAt < b.dueAt || (a.dueAt == b.dueAt && a.id < b.id)
    }
}
