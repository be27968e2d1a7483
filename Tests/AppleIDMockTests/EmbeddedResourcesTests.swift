import Foundation
import XCTest
@testable import AppleIDMock

/// The served copies of the contract and the dashboard's files (string literals that
/// `scripts/embed-resources` writes into Sources/AppleIDMock/Embedded/) are the files' bytes, to
/// the byte: an edit to a file without running the script fails here.
final class EmbeddedResourcesTests: XCTestCase {
    private static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/AppleIDMock")

    private func assertServed(_ served: [UInt8], equals path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.sources.appendingPathComponent(path)))
        XCTAssertFalse(bytes.isEmpty, path, file: file, line: line)
        guard served != bytes else { return }
        let first = zip(served, bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(served.count, bytes.count)
        XCTFail("\(path): the compiled-in copy differs from the file at byte \(first) (\(served.count) against \(bytes.count) bytes); "
                + "run scripts/embed-resources", file: file, line: line)
    }

    func testTheContractServedIsTheFile() throws {
        try assertServed(PackageResources.openapi_json, equals: "Contract/openapi.json")
        XCTAssertEqual(OpenAPIEndpoint.document, PackageResources.openapi_json)
    }

    func testTheDashboardServedIsItsFiles() throws {
        try assertServed(PackageResources.dashboard_html, equals: "Control/Dashboard/dashboard.html")
        try assertServed(PackageResources.dashboard_js, equals: "Control/Dashboard/dashboard.js")
        try assertServed(PackageResources.dashboard_css, equals: "Control/Dashboard/dashboard.css")
    }

    func testSignInWithAppleJSServedIsItsFile() throws {
        try assertServed(PackageResources.appleid_auth_js, equals: "Endpoints/AppleJS/appleid.auth.js")
    }
}
