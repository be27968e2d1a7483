import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Starts the real mock (the same `AppleIDMockServer.start` the CLI uses) on port 0; its log
/// lines (a refusal's reason, at the default level) are dropped unless `adjust` sets `log`.
func startMock(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDMockServer {
    var configuration = AppleIDMockConfiguration()
    configuration.port = 0
    configuration.http.eventLoopCount = 2
    configuration.keysDirectory = repositoryRoot + "/Keys/signing"
    configuration.log = { _ in }
    adjust(&configuration)
    return try AppleIDMockServer.start(configuration)
}

/// The repository root (this file is Tests/AppleIDMockTests/MockServerFixture.swift).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Parses a body as a JSON object, failing the test otherwise.
func jsonObject(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
    guard case .object(let object) = try JSONParser.parse(bytes) else {
        XCTFail("not a JSON object: \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
        throw JOSEError.malformedJWS("not an object")
    }
    return object
}

/// Fails unless `body` throws; returns the error for further checks.
@discardableResult
func assertThrows<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> (any Error)? {
    do {
        let value = try body()
        XCTFail("expected an error, got \(value)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}
