import JOSE
import XCTest

/// CSPRNG byte counts and freshness.
final class SecureRandomTests: XCTestCase {
    /// Bytes returns requested count.
    func testBytes_ReturnsRequestedCount() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        XCTAssertEqual(SecureRandom.bytes(1).count, 1)
        XCTAssertEqual(SecureRandom.bytes(4096).count, 4096)
        for count in [63, 64, 65, 4097] { XCTAssertEqual(SecureRandom.bytes(count).count, count) }
    }

    /// Small draws come from a pooled block: across several refills no draw repeats another, and
    /// no draw is the zeroes a taken slice is wiped to.
    func testPooledDraws_NeverRepeat_AcrossRefills() {
        var seen = Set<[UInt8]>()
        for _ in 0..<1000 {
            let draw = SecureRandom.bytes(16)
            XCTAssertNotEqual(draw, [UInt8](repeating: 0, count: 16))
            XCTAssertTrue(seen.insert(draw).inserted)
        }
    }

    /// Bytes returns different bytes when called twice.
    func testBytes_ReturnsDifferentBytes_WhenCalledTwice() {
        XCTAssertNotEqual(SecureRandom.bytes(32), SecureRandom.bytes(32))
    }
}
