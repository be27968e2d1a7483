@testable import AppleIDMock
import Glibc
import MiniHTTP
import XCTest

/// The journal's storage (`JournalRing`, `JournalRecord`'s bytes): whatever the sizes, it keeps
/// exactly the newest records, unchanged, within its slots and byte budget; and a record reads
/// back as it was written, clipped to its bounds.
final class JournalRingTests: XCTestCase {
    /// A small deterministic generator (the test must replay exactly).
    private struct Generator {
        var state: UInt64
        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }
    }

    /// Record `id`'s bytes: its id's low byte, with the whole id at every 64th byte (libc's
    /// memset and memcmp, so that the test is quick in a debug build).
    private func fill(_ id: UInt64, _ base: UnsafeMutableRawPointer, _ length: Int) {
        memset(base, Int32(truncatingIfNeeded: id), length)
        for offset in stride(from: 0, to: length - 7, by: 64) { (base + offset).storeBytes(of: id, as: UInt64.self) }
    }

    private func intact(_ id: UInt64, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let expected = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        defer { expected.deallocate() }
        fill(id, expected, bytes.count)
        return memcmp(expected, bytes.baseAddress!, bytes.count) == 0
    }

    /// Thousands of records of mixed sizes through rings of several shapes: after every append
    /// the ring holds a run of the newest ids ending at the last, each intact; never more than
    /// its slots or budget; and all `slotCapacity` of them whenever they take under a quarter of
    /// the budget (only the budget may make it keep fewer).
    func testAtScale_MixedSizes_KeepExactlyTheNewest_IntactAndWithinBounds() {
        for (capacity, budget, largest, seed) in [(1, 256 * 1024, 9000, 1), (7, 256 * 1024, 20_000, 2), (100, 256 * 1024, 4000, 3),
                                                  (1000, 1024 * 1024, 600, 4), (50, 300 * 1024, 60_000, 5),
                                                  // The budget, not the slots, decides: records wrap and drop at every step.
                                                  (10_000, 256 * 1024, 64_000, 6), (10_000, 256 * 1024, 200_000, 7),
                                                  // The slots decide, with more than the first buffer's worth kept: it must grow.
                                                  (2000, 8 * 1024 * 1024, 9600, 8)] as [(Int, Int, Int, UInt64)] {
            var ring = JournalRing(slotCapacity: capacity, byteBudget: budget)
            var random = Generator(state: seed)
            var lengths: [Int] = []
            for step in 0..<4000 {
                let length = random.next(1...(step % 97 == 0 ? largest : max(1, largest / 8)))
                let expectedID = UInt64(lengths.count + 1)
                guard let kept = ring.append(length: length, { self.fill(expectedID, $0, length) }) else {
                    return XCTFail("a record of \(length) bytes within the budget was refused")
                }
                lengths.append(length)
                XCTAssertEqual(kept.id, expectedID)
                XCTAssertEqual(ring.lastID, expectedID)
                XCTAssertLessThanOrEqual(ring.count, capacity)
                XCTAssertGreaterThanOrEqual(ring.count, 1, "the newest record is always kept")
                XCTAssertLessThanOrEqual(ring.size, budget)
                XCTAssertLessThanOrEqual(ring.liveBytes, budget)
                let newest = lengths.suffix(capacity)
                if newest.reduce(0, +) <= budget / 4 {
                    XCTAssertEqual(ring.count, newest.count, "capacity \(capacity), step \(step): dropped below capacity without pressure")
                }
                // The oldest (the first a misplaced write would hit) and the newest are read back
                // at every step; every record every 50 steps (each byte is compared).
                var ends = 0
                ring.forEach(after: ring.count > 1 ? expectedID - 1 : 0) { id, record in
                    if record.count == lengths[Int(id) - 1] && intact(id, record) { ends += 1 }
                    return true
                }
                if ring.count <= 100 {
                    ring.forEach(after: ring.firstID - 1) { id, record in
                        if id == ring.firstID, record.count == lengths[Int(id) - 1] && intact(id, record) { ends += 1 }
                        return true
                    }
                } else {
                    ends += 1
                }
                XCTAssertEqual(ends, 2, "capacity \(capacity), step \(step): the oldest or newest record was damaged")
                guard step % 50 == 0 || step == 3999 else { continue }
                var ids: [UInt64] = []
                var bytes = 0
                var damaged = 0
                ring.forEach(after: 0) { id, record in
                    ids.append(id)
                    bytes += record.count
                    if record.count != lengths[Int(id) - 1] || !intact(id, record) { damaged += 1 }
                    return true
                }
                XCTAssertEqual(damaged, 0, "capacity \(capacity), step \(step)")
                XCTAssertEqual(ids, Array(ring.firstID...expectedID), "the newest, oldest first, no gap")
                XCTAssertEqual(ring.liveBytes, bytes)
            }
        }
    }

    func testLengthsOutsideTheBudget_AreRefused_AndTheRingIsUnchanged() {
        var ring = JournalRing(slotCapacity: 4, byteBudget: 256 * 1024)
        XCTAssertNotNil(ring.append(length: 10) { self.fill(1, $0, 10) })
        XCTAssertNil(ring.append(length: 0) { _ in XCTFail("not written") })
        XCTAssertNil(ring.append(length: 256 * 1024 + 1) { _ in XCTFail("not written") })
        XCTAssertNotNil(ring.append(length: 256 * 1024) { self.fill(2, $0, 256 * 1024) }, "exactly the budget fits (alone)")
        XCTAssertEqual(ring.count, 1)
        XCTAssertEqual(ring.lastID, 2)
    }

    func testAfter_SkipsOlderIDs_AndRemoveAll_KeepsCounting() {
        var ring = JournalRing(slotCapacity: 3, byteBudget: 0)
        for id in 1...5 as ClosedRange<UInt64> { ring.append(length: 16) { self.fill(id, $0, 16) } }
        var seen: [UInt64] = []
        ring.forEach(after: 3) { id, _ in seen.append(id); return true }
        XCTAssertEqual(seen, [4, 5])
        seen = []
        ring.forEachNewestFirst { id, _ in seen.append(id); return id > 3 }
        XCTAssertEqual(seen, [5, 4, 3], "newest first, until the body says stop")
        seen = []
        ring.forEach(after: .max) { id, _ in seen.append(id); return true }
        XCTAssertEqual(seen, [])
        ring.removeAll()
        XCTAssertEqual(ring.count, 0)
        XCTAssertEqual(ring.firstID, 6)
        XCTAssertEqual(ring.append(length: 16) { self.fill(6, $0, 16) }?.id, 6)
    }

    // MARK: - A record's bytes

    private func encoded(_ exchange: HTTPExchange, time: Double = 1_700_000_000.25) -> [UInt8] {
        let plan = JournalRecord.Plan(exchange, routes: nil)
        var bytes = [UInt8](repeating: 0xEE, count: plan.length)
        bytes.withUnsafeMutableBytes { JournalRecord.encode(exchange, time: time, plan: plan, into: $0.baseAddress!) }
        return bytes
    }

    func testARecord_ReadsBackAsWritten_ClippedToItsBounds() throws {
        var headers: HTTPHeaders = ["Host": "appleid.apple.com", "Content-Type": "application/x-www-form-urlencoded"]
        for index in 0..<300 { headers.add("X-Filler-\(index)", "value") }
        let body = Array(String(repeating: "client_id=com.example.web&", count: 400).utf8)
        let exchange = HTTPExchange(id: 9, peer: HTTPPeerAddress(host: "2001:db8::1", port: 50_123), isTLS: true,
                                    request: HTTPRequest(method: .post, target: "/auth/token?xy=" + String(repeating: "é", count: 3000), headers: headers,
                                                         body: body),
                                    status: .badRequest, responseBodyCount: 27, microseconds: 1234, reason: .timedOut,
                                    note: JournalNote(error: "invalid_grant", reason: "the code expired", events: [3, 4, UInt64.max]))
        let bytes = encoded(exchange)
        let record = try XCTUnwrap(bytes.withUnsafeBytes { JournalRecord(decoding: $0) })
        XCTAssertEqual(record.time, 1_700_000_000.25)
        XCTAssertEqual(record.peer, HTTPPeerAddress(host: "2001:db8::1", port: 50_123))
        XCTAssertTrue(record.isTLS)
        XCTAssertEqual(record.status, .badRequest)
        XCTAssertEqual(record.responseBytes, 27)
        XCTAssertEqual(record.microseconds, 1234)
        XCTAssertEqual(record.serverReason, "request timed out")
        XCTAssertEqual(record.note?.error, "invalid_grant")
        XCTAssertEqual(record.note?.reason, "the code expired")
        XCTAssertEqual(record.note?.events, [3, 4, UInt64.max])
        let request = try XCTUnwrap(record.request)
        XCTAssertEqual(request.method, .post)
        // 15 bytes and 2,040 é fill 4,095 bytes; the 4,096th is half an é, shown as U+FFFD.
        XCTAssertEqual(request.target.utf8.count, JournalRecord.targetLimit - 1 + 3)
        XCTAssertEqual(request.target.unicodeScalars.last, "\u{FFFD}")
        XCTAssertTrue(request.target.hasPrefix("/auth/token?xy=éé"))
        XCTAssertEqual(request.body, Array(body.prefix(JournalRecord.bodyLimit)))
        XCTAssertTrue(record.bodyTruncated)
        let kept = request.headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        XCTAssertLessThanOrEqual(kept, JournalRecord.headerLimit)
        XCTAssertEqual(Array(request.headers.fields.prefix(2).map(\.value)), ["appleid.apple.com", "application/x-www-form-urlencoded"])
        XCTAssertGreaterThan(request.headers.count, 100)
        XCTAssertLessThan(request.headers.count, 302)
    }

    func testAnExchangeWithoutRequestOrStatus_ReadsBackSo() throws {
        let exchange = HTTPExchange(id: 1, request: nil, status: nil, reason: .peerClosed)
        let record = try XCTUnwrap(encoded(exchange).withUnsafeBytes { JournalRecord(decoding: $0) })
        XCTAssertNil(record.request)
        XCTAssertNil(record.status)
        XCTAssertNil(record.peer)
        XCTAssertNil(record.note)
        XCTAssertFalse(record.isTLS)
        XCTAssertEqual(record.serverReason, "client closed the connection mid-request")
    }

    /// Every cut-short record reads as nil (or as a shorter record), never past its bytes.
    func testTruncatedBytes_NeverReadPastTheirEnd() {
        let exchange = HTTPExchange(id: 2, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1), request: HTTPRequest(method: .get, target: "/auth/keys",
                                    headers: ["Host": "x"], body: Array("abc".utf8)), status: .ok, note: JournalNote(error: nil, reason: nil, events: [1]))
        let bytes = encoded(exchange)
        for cut in 0..<bytes.count {
            let prefix = Array(bytes.prefix(cut))
            XCTAssertNil(prefix.withUnsafeBytes { JournalRecord(decoding: $0) }, "cut at \(cut) of \(bytes.count)")
        }
        XCTAssertNotNil(bytes.withUnsafeBytes { JournalRecord(decoding: $0) })
    }
}
