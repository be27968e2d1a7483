import JOSE
import XCTest

/// SHA-256 known-answer vectors.
final class SHA256Tests: XCTestCase {
    /// Hash matches FIPS 180 vectors.
    func testHash_MatchesFIPS180Vectors() {
        XCTAssertEqual(hex(SHA256.hash([UInt8]())), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(hex(SHA256.hash("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        XCTAssertEqual(
            hex(SHA256.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    /// Hash differs when one byte changes.
    func testHash_Differs_WhenOneByteChanges() {
        XCTAssertNotEqual(hex(SHA256.hash("abd".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

final class HMACSHA256Tests: XCTestCase {
    func testHMAC_MatchesRFC4231Vectors() {
        // RFC 4231 test case 2.
        let mac = HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // RFC 4231 test case 6: a key longer than the block size.
        let long = HMACSHA256.mac(key: [UInt8](repeating: 0xaa, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        XCTAssertEqual(long.map { String(format: "%02x", $0) }.joined(), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testHMAC_EqualRejectsAnyDifference() {
        let mac = HMACSHA256.mac(key: [1, 2, 3], message: [4])
        XCTAssertTrue(HMACSHA256.equal(mac, mac))
        var flipped = mac
        flipped[31] ^= 1
        XCTAssertFalse(HMACSHA256.equal(mac, flipped))
        XCTAssertFalse(HMACSHA256.equal(mac, Array(mac.dropLast())))
    }
}
