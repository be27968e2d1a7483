import JOSE
import XCTest

/// The seeded stream: pinned vectors, buffering across calls, snapshots and derived streams.
final class SeededRandomTests: XCTestCase {
    // Pinned once from SeededRandom and cross-checked with Python's hashlib and hmac, which
    // compute the construction independently:
    //   key = sha256(b"AppleIDMock seeded random v1" + struct.pack(">Q", 7)).digest()
    //   block i = hmac.new(key, struct.pack(">Q", i), hashlib.sha256).digest()
    //   derived(label) keys with sha256(key + label.encode()).digest()
    // (Fixtures/check_seeded_vectors.py prints them all again.)
    private let seed7First32 = "73a70f7c09be415e3424d26bd920f267272f577ebb0b5ef626e71f706278cc0f"
    private let seed7First75 = "73a70f7c09be415e3424d26bd920f267272f577ebb0b5ef626e71f706278cc0f"
        + "c2a81260395b9eaeb109a777b58f2917217a967f0348da3bc3ac8664cc6e34d85ae8a235d2bcab8fe322ce"
    private let seed7DerivedA = "9051d49a52356ca4c7dff769f0b7429eac0eb28cae2170c2a319cdb5f360afb1"
    private let emptySeedFirst32 = "203287004a60ada18de0d58f492129465c93186834ded5964cf512e9c4f4f56e"

    /// Bytes match the pinned vector for seed 7; neighbouring seeds do not.
    func testBytes_MatchPinnedVector_ForSeed7() {
        var random = SeededRandom(seed: 7)
        XCTAssertEqual(hex(random.bytes(32)), seed7First32)
        var fresh = SeededRandom(seed: 7)
        XCTAssertEqual(hex(fresh.bytes(75)), seed7First75)
        var six = SeededRandom(seed: 6)
        XCTAssertNotEqual(hex(six.bytes(32)), seed7First32)
        var littleEndian = SeededRandom(seed: 7 << 56)
        XCTAssertNotEqual(hex(littleEndian.bytes(32)), seed7First32)
    }

    /// Seed bytes of any length, the empty seed included, have their own stream.
    func testBytes_MatchPinnedVector_ForEmptySeed() {
        var empty = SeededRandom(seed: [])
        XCTAssertEqual(hex(empty.bytes(32)), emptySeedFirst32)
        var zero = SeededRandom(seed: [0])
        XCTAssertNotEqual(hex(zero.bytes(32)), emptySeedFirst32)
    }

    /// The integer seed is its 8 big-endian bytes; other byte strings are other streams.
    func testIntegerSeed_IsItsBigEndianBytes() {
        var integer = SeededRandom(seed: 0x0102_0304_0506_0708)
        var bytes = SeededRandom(seed: [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(integer.bytes(40), bytes.bytes(40))
        var short = SeededRandom(seed: [7])
        var seven = SeededRandom(seed: 7)
        XCTAssertNotEqual(short.bytes(32), seven.bytes(32))
    }

    /// Consecutive calls hand out the same bytes as one call for their total.
    func testBytes_ConsecutiveCallsEqualOneLongCall() {
        let start = SeededRandom(seed: 7)
        var whole = start
        let expected = whole.bytes(75)
        var split = start
        XCTAssertEqual(split.bytes(5) + split.bytes(70), expected)
        for cuts in [[0, 75], [1, 31, 1, 42], [32, 32, 11], [31, 2, 42], [75, 0]] {
            var pieces = start
            XCTAssertEqual(cuts.flatMap { pieces.bytes($0) }, expected, "cuts \(cuts)")
        }
        // Twin: the stream moves on, so a second call does not repeat the first.
        var again = start
        XCTAssertNotEqual(again.bytes(5), again.bytes(5))
    }

    /// A copy is a snapshot: it goes on from where the original stood, whatever the original does.
    func testCopy_IsSnapshot() {
        var original = SeededRandom(seed: 7)
        _ = original.bytes(10)
        var snapshot = original
        let next = original.bytes(40)
        XCTAssertEqual(snapshot.bytes(40), next)
        XCTAssertNotEqual(original.bytes(40), next)
    }

    /// Derived streams differ from their parent and from each other, match the pinned vector,
    /// and do not depend on how far the parent has gone.
    func testDerived_DiffersFromParentAndSiblings() {
        var parent = SeededRandom(seed: 7)
        var a = parent.derived("a")
        var b = parent.derived("b")
        let aBytes = a.bytes(32)
        XCTAssertEqual(hex(aBytes), seed7DerivedA)
        XCTAssertNotEqual(hex(aBytes), seed7First32)
        XCTAssertNotEqual(b.bytes(32), aBytes)
        var empty = parent.derived("")
        XCTAssertNotEqual(empty.bytes(32), aBytes)
        // Deriving does not advance the parent, and the parent's position does not move the child.
        XCTAssertEqual(hex(parent.bytes(32)), seed7First32)
        var later = parent.derived("a")
        XCTAssertEqual(later.bytes(32), aBytes)
        var grandchild = parent.derived("a").derived("a")
        XCTAssertNotEqual(grandchild.bytes(32), aBytes)
    }

    /// Entropy seeds the same stream as seed bytes (a run that reports its entropy replays), and
    /// two system draws give two streams.
    func testEntropy_IsReplayableAsSeed_AndSystemDrawsDiffer() {
        let entropy = SecureRandom.bytes(32)
        var fromEntropy = SeededRandom(entropy: entropy)
        var fromSeed = SeededRandom(seed: entropy)
        XCTAssertEqual(fromEntropy.bytes(48), fromSeed.bytes(48))
        var first = SeededRandom(entropy: SecureRandom.bytes(32))
        var second = SeededRandom(entropy: SecureRandom.bytes(32))
        XCTAssertNotEqual(first.bytes(32), second.bytes(32))
    }

    /// Counts of zero give nothing and do not disturb the stream.
    func testBytes_ZeroCount_ReturnsNothing() {
        var random = SeededRandom(seed: 7)
        XCTAssertEqual(random.bytes(0), [])
        XCTAssertEqual(hex(random.bytes(32)), seed7First32)
        XCTAssertEqual(random.bytes(0), [])
    }
}
