/// The ids of settled records in the delivery log, oldest first: a binary min-heap, so a full log
/// finds its oldest settled record in O(log n) instead of scanning ten thousand undelivered
/// ones at every event (each event at the cap cost 1–1.7 ms more). Entries go stale
/// when their record leaves the log; whoever looks checks an entry against the log, and the
/// log rebuilds the queue when stale entries outnumber live ones.
struct SettledQueue {
    private var heap: [UInt64] = []

    /// Entries, stale ones included.
    var count: Int { heap.count }

    /// The oldest entry, if any.
    var first: UInt64? { heap.first }

    /// Adds a record's id.
    mutating func insert(_ id: UInt64) {
        heap.append(id)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child] < heap[parent] else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the oldest entry.
    mutating func removeFirst() {
        guard !heap.isEmpty else { return }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left] < heap[smallest] { smallest = left }
            if right < heap.count && heap[right] < heap[smallest] { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Holds exactly `ids`, ascending (the log's order), which is already a heap.
    mutating func rebuild(ascending ids: some Sequence<UInt64>) {
        heap = Array(ids)
    }

    /// Forgets every entry.
    mutating func removeAll() { heap.removeAll() }
}
