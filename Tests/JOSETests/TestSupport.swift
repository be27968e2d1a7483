import Foundation
import JOSE
import XCTest

/// Fails unless `expression` throws; hands the error to `check` for further assertions.
func assertThrows<T>(
    _ expression: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "",
    file: StaticString = #filePath,
    line: UInt = #line,
    _ check: (any Error) -> Void = { _ in }
) {
    do {
        let value = try expression()
        XCTFail("expected an error, got \(value) \(message())", file: file, line: line)
    } catch {
        check(error)
    }
}

/// Fails unless `error` is a `JOSEError` matching `predicate`.
func assertJOSEError(
    _ error: any Error,
    file: StaticString = #filePath,
    line: UInt = #line,
    _ predicate: (JOSEError) -> Bool
) {
    guard let joseError = error as? JOSEError else {
        return XCTFail("expected JOSEError, got \(error)", file: file, line: line)
    }
    XCTAssertTrue(predicate(joseError), "unexpected \(joseError)", file: file, line: line)
}

/// Files made once by `Fixtures/make_fixtures.py` (PyJWT + cryptography).
enum Fixture {
    /// The text of fixture `name`, with a trailing newline removed for one-line files.
    static func text(_ name: String) throws -> String {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// A one-line fixture (a token) without its newline.
    static func line(_ name: String) throws -> String {
        try text(name).trimmingCharacters(in: .newlines)
    }
}

/// Keys generated once per test process (RSA generation is slow enough to share).
enum SharedKeys {
    /// A 2048-bit RSA key.
    static let rsa: RSAPrivateKey = {
        do { return try RSAPrivateKey.generate() } catch { fatalError("RSA keygen failed: \(error)") }
    }()

    /// A second, unrelated RSA key.
    static let otherRSA: RSAPrivateKey = {
        do { return try RSAPrivateKey.generate() } catch { fatalError("RSA keygen failed: \(error)") }
    }()

    /// A P-256 key.
    static let p256: P256PrivateKey = {
        do { return try P256PrivateKey.generate() } catch { fatalError("P-256 keygen failed: \(error)") }
    }()

    /// A second, unrelated P-256 key.
    static let otherP256: P256PrivateKey = {
        do { return try P256PrivateKey.generate() } catch { fatalError("P-256 keygen failed: \(error)") }
    }()
}

/// Hex text of `bytes`, lowercase.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// `bytes` with bit `bit` of byte `index` flipped.
func flippingBit(_ bytes: [UInt8], at index: Int, bit: Int = 0) -> [UInt8] {
    var copy = bytes
    copy[index] ^= UInt8(1 << bit)
    return copy
}
