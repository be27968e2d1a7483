import JOSE
import XCTest

/// CSPRNG byte counts and freshness.
final class SecureRandomTests: XCTestCase {
    /// Bytes returns requested count.
    func testBytes_ReturnsRequestedCount() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        XCTAssertEqual(SecureRandom.bytes(1).count, 1)
        XCTAssertEqual(SecureRandom.bytes(4096).count, 4096)
    }

    /// Bytes returns different bytes when called twice.
    func testBytes_ReturnsDifferentBytes_WhenCalledTwice() {
        XCTAssertNotEqual(SecureRandom.bytes(32), SecureRandom.bytes(32))
    }
}
