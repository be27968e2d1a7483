import AppleIDMock
import Foundation
import MiniHTTP
import XCTest

/// The OpenAPI contract (issue 21 item 3) and the route table stay one: every route the mock
/// serves is in the document served at `GET /__mock/openapi.json`, every operation there is a
/// route, and every field a route declares it reads is a parameter or body property of its
/// operation. Each test reads the document as users get it, through the route.
final class OpenAPIDriftTests: XCTestCase {
    func testOpenAPIDocument_DescribesEveryRoute_AndNoOther() async throws {
        let mock = try inMemoryMock()
        let document = try await servedDocument(mock)
        let report = OpenAPIDrift.report(document: document, routes: mock.routes.routes)
        XCTAssertEqual(report, [], "the OpenAPI document and the route table differ:\n" + report.joined(separator: "\n"))
        await mock.stop()
    }

    func testOpenAPIDrift_NamesARouteMissingFromTheDocument() async throws {
        let mock = try inMemoryMock()
        let document = try await servedDocument(mock)
        var routes = mock.routes.routes
        routes.append(RouteInfo(method: .put, template: "/__mock/clock", summary: "Not a route", reads: []))
        routes.append(RouteInfo(method: .get, template: "/__mock/keys/{kid}", summary: "Not a route", reads: []))
        // Only what the change added counts: the twin holds whatever the real pair reports.
        let baseline = Set(OpenAPIDrift.report(document: document, routes: mock.routes.routes))
        let report = Set(OpenAPIDrift.report(document: document, routes: routes)).subtracting(baseline)
        XCTAssertEqual(report, ["route PUT /__mock/clock is missing from the document",
                                "route GET /__mock/keys/{kid} is missing from the document"])
        await mock.stop()
    }

    func testOpenAPIDrift_NamesAnOperationTheTableLacks_AndAReadFieldTheDocumentLacks() async throws {
        let mock = try inMemoryMock()
        let served = try await servedDocument(mock)
        var document = served
        var paths = try XCTUnwrap(document["paths"] as? [String: Any])
        var clock = try XCTUnwrap(paths["/__mock/clock"] as? [String: Any])
        clock["delete"] = clock["get"]
        paths["/__mock/clock"] = clock
        paths["/auth/keys"] = nil
        paths["/auth/rotate"] = ["post": [String: Any]()]
        document["paths"] = paths
        var routes = mock.routes.routes
        let index = try XCTUnwrap(routes.firstIndex { $0.method == .get && $0.template == "/__mock/events" })
        routes[index].reads.append("shoe_size")
        let baseline = Set(OpenAPIDrift.report(document: served, routes: mock.routes.routes))
        let report = Set(OpenAPIDrift.report(document: document, routes: routes)).subtracting(baseline)
        XCTAssertEqual(report, ["route GET /auth/keys is missing from the document",
                                "route GET /__mock/events reads shoe_size, which the document does not name",
                                "operation DELETE /__mock/clock in the document is no route",
                                "operation POST /auth/rotate in the document is no route"])
        await mock.stop()
    }

    func testOpenAPIDocument_IsServedAsJSON_ByteForByteTheCommittedFile() async throws {
        let mock = try inMemoryMock()
        let response = await mock.get("/__mock/openapi.json")
        XCTAssertEqual(response.status.code, 200)
        XCTAssertEqual(response.headers["Content-Type"], "application/json")
        let committed = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/Sources/AppleIDMock/Contract/openapi.json"))
        XCTAssertEqual(response.body, Array(committed), "the served document is not the committed file")
        await mock.stop()
    }

    /// The document `GET /__mock/openapi.json` serves, parsed.
    private func servedDocument(_ mock: InMemoryMock) async throws -> [String: Any] {
        let response = await mock.get("/__mock/openapi.json")
        XCTAssertEqual(response.status.code, 200)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }
}

/// Compares an OpenAPI document with a route table.
enum OpenAPIDrift {
    /// The operations OpenAPI 3.1 names (§4.8.9), as HTTP methods.
    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// One line per difference: routes the document lacks, fields a route reads that its
    /// operation does not name, then operations that are no route.
    static func report(document: [String: Any], routes: [RouteInfo]) -> [String] {
        let paths = document["paths"] as? [String: Any] ?? [:]
        var lines: [String] = []
        var routed: Set<String> = []
        for route in routes {
            let key = "\(route.method.rawValue) \(route.template)"
            routed.insert(key)
            guard let operation = (paths[route.template] as? [String: Any])?[route.method.rawValue.lowercased()] as? [String: Any] else {
                lines.append("route \(key) is missing from the document")
                continue
            }
            let named = fieldNames(operation, document: document)
            for field in route.reads where !named.contains(field) {
                lines.append("route \(key) reads \(field), which the document does not name")
            }
        }
        for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
            for method in methods where (item as? [String: Any])?[method] != nil {
                let key = "\(method.uppercased()) \(path)"
                if !routed.contains(key) { lines.append("operation \(key) in the document is no route") }
            }
        }
        return lines
    }

    /// The parameter names of an operation and the property names of its request bodies (of each
    /// `oneOf` shape).
    static func fieldNames(_ operation: [String: Any], document: [String: Any]) -> Set<String> {
        var names: Set<String> = []
        for parameter in operation["parameters"] as? [[String: Any]] ?? [] {
            if let name = resolve(parameter, document)["name"] as? String { names.insert(name) }
        }
        let body = resolve(operation["requestBody"] as? [String: Any] ?? [:], document)
        for case let media as [String: Any] in (body["content"] as? [String: Any] ?? [:]).values {
            let schema = resolve(media["schema"] as? [String: Any] ?? [:], document)
            // A body of one of several shapes names the fields of each.
            let branches = (schema["oneOf"] as? [[String: Any]] ?? []).map { resolve($0, document) }
            for shape in [schema] + branches { names.formUnion((shape["properties"] as? [String: Any] ?? [:]).keys) }
        }
        return names
    }

    /// `object`, or what its local `$ref` (`#/components/…`) points to.
    static func resolve(_ object: [String: Any], _ document: [String: Any]) -> [String: Any] {
        guard let reference = object["$ref"] as? String, reference.hasPrefix("#/") else { return object }
        var node: Any = document
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let next = (node as? [String: Any])?[String(part)] else { return [:] }
            node = next
        }
        return node as? [String: Any] ?? [:]
    }
}
