/// The journal's storage: the newest records as bytes in one circular buffer, and a slot per
/// record (where its bytes are) in a ring of at most `slotCapacity`. Keeping a record copies its
/// bytes once and allocates nothing (the buffer grows, by doubling, only while the records kept
/// need more than half of it, up to `byteBudget`); dropping the oldest frees nothing either. So
/// an I/O thread journaling a request takes no reference counts and calls no allocator, and the
/// memory the journal holds has a ceiling: the slots and `byteBudget`.
///
/// Ids are given in the order records are kept, without a gap: the oldest kept has `firstID`, the
/// newest `lastID`. Not thread-safe; the journal holds it under its lock.
struct JournalRing: ~Copyable {
    /// Where one record's bytes are.
    private struct Slot {
        var offset: Int
        var length: Int
    }

    /// The buffer's first size.
    static let initialBytes = 256 * 1024

    let slotCapacity: Int
    let byteBudget: Int
    /// Grows to `slotCapacity` as records come; `start` is the oldest's index once it wraps.
    private var slots: [Slot] = []
    private var start = 0
    /// Records kept.
    private(set) var count = 0
    /// The newest id given (0 before the first); it goes on across `removeAll`.
    private(set) var lastID: UInt64 = 0
    private var bytes: UnsafeMutableRawPointer?
    /// The buffer's size in bytes (0 until the first record).
    private(set) var size = 0
    /// Where the next record's bytes go (the end of the newest).
    private var head = 0
    /// Bytes the kept records take.
    private(set) var liveBytes = 0

    /// A ring of at most `slotCapacity` records and `byteBudget` bytes (no record may be larger).
    init(slotCapacity: Int, byteBudget: Int) {
        self.slotCapacity = max(1, slotCapacity)
        self.byteBudget = max(Self.initialBytes, byteBudget)
    }

    deinit {
        bytes?.deallocate()
    }

    /// The oldest kept record's id (`lastID + 1` when none is kept).
    var firstID: UInt64 { lastID &- UInt64(count) &+ 1 }

    /// Keeps a record of `length` bytes, which `write` fills, dropping the oldest records as the
    /// slots or the budget require. Returns its id and how many were dropped; nil (and nothing
    /// kept) for a length outside 1 to `byteBudget`.
    @discardableResult
    mutating func append(length: Int, _ write: (UnsafeMutableRawPointer) -> Void) -> (id: UInt64, dropped: Int)? {
        guard length > 0 && length <= byteBudget else { return nil }
        var dropped = 0
        if count == slotCapacity {
            dropOldest()
            dropped += 1
        }
        var offset = place(length)
        while offset == nil {
            if count == 0 || (size < byteBudget && liveBytes + length > size / 2) {
                grow(toFit: length)
            } else {
                dropOldest()
                dropped += 1
            }
            offset = place(length)
        }
        guard let offset, let bytes else { preconditionFailure("place(_:) answers only with a buffer") }
        write(bytes + offset)
        head = offset + length
        liveBytes += length
        let slot = Slot(offset: offset, length: length)
        if slots.count < slotCapacity && count == slots.count {
            // Still filling: the newest goes at the end, once the oldest is first again.
            if start != 0 {
                slots = Array(slots[start...] + slots[..<start])
                start = 0
            }
            slots.append(slot)
        } else {
            slots[(start + count) % slots.count] = slot
        }
        count += 1
        lastID += 1
        return (lastID, dropped)
    }

    /// Calls `body` with each kept record's id and bytes whose id is above `after`, oldest first,
    /// while it returns true.
    func forEach(after: UInt64, _ body: (UInt64, UnsafeRawBufferPointer) -> Bool) {
        guard let bytes, count > 0 else { return }
        let first = firstID
        let skip = after >= first ? Int(min(after - first + 1, UInt64(count))) : 0
        for index in skip..<count {
            let slot = slots[(start + index) % slots.count]
            guard body(first + UInt64(index), UnsafeRawBufferPointer(start: bytes + slot.offset, count: slot.length)) else { return }
        }
    }

    /// Calls `body` with each kept record's id and bytes, newest first, while it returns true.
    func forEachNewestFirst(_ body: (UInt64, UnsafeRawBufferPointer) -> Bool) {
        guard let bytes, count > 0 else { return }
        let first = firstID
        for index in stride(from: count - 1, through: 0, by: -1) {
            let slot = slots[(start + index) % slots.count]
            guard body(first + UInt64(index), UnsafeRawBufferPointer(start: bytes + slot.offset, count: slot.length)) else { return }
        }
    }

    /// Forgets every record (ids go on); the buffer is kept for the next ones.
    mutating func removeAll() {
        slots.removeAll()
        start = 0
        count = 0
        head = 0
        liveBytes = 0
    }

    // MARK: - Placement

    /// Where `length` bytes fit without touching a kept record: at the head, or at the buffer's
    /// start when the head is too near the end (the rest of the end is left unused until the head
    /// comes round again); nil when neither.
    private func place(_ length: Int) -> Int? {
        guard length <= size else { return nil }
        guard count > 0 else { return 0 }
        let tail = slots[start].offset
        if head > tail {
            // Kept: [tail, head). Free: [head, size) and [0, tail).
            if head + length <= size { return head }
            return length <= tail ? 0 : nil
        }
        // Kept: [tail, size) and [0, head), or everything when head == tail. Free: [head, tail).
        return head + length <= tail ? head : nil
    }

    private mutating func dropOldest() {
        guard count > 0 else { return }
        liveBytes -= slots[start].length
        start = (start + 1) % slots.count
        count -= 1
        if count == 0 {
            start = 0
            head = 0
            slots.removeAll(keepingCapacity: true)
        }
    }

    /// A buffer at least twice as large (up to the budget) that fits `length` more, the kept
    /// records copied to its start in order.
    private mutating func grow(toFit length: Int) {
        var newSize = max(size * 2, Self.initialBytes)
        while newSize < liveBytes + length { newSize *= 2 }
        newSize = min(newSize, byteBudget)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newSize, alignment: 16)
        var end = 0
        var moved: [Slot] = []
        moved.reserveCapacity(Swift.max(slots.count, 1))
        if let bytes {
            for index in 0..<count {
                let slot = slots[(start + index) % slots.count]
                (grown + end).copyMemory(from: bytes + slot.offset, byteCount: slot.length)
                moved.append(Slot(offset: end, length: slot.length))
                end += slot.length
            }
            bytes.deallocate()
        }
        bytes = grown
        size = newSize
        slots = moved
        start = 0
        head = end
    }
}
