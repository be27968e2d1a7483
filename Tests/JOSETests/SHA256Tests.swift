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
