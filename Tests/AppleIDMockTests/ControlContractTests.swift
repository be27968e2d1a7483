@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// The control half of `openapi.json` is made from the declarations (`ControlOperations`,
/// `ControlSchemas`, `ControlRefusals`), never written by hand: the committed file must be what
/// they make, byte for byte. `scripts/contract` writes it (this test, with
/// `APPLEID_MOCK_WRITE_CONTRACT=1`) and the served copy after it.
final class ControlContractTests: XCTestCase {
    private static let file = URL(fileURLWithPath: repositoryRoot + "/Sources/AppleIDMock/Contract/openapi.json")

    private func committed() throws -> (text: String, document: ContractJSON) {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        return (text, ContractJSON(try JSONParser.parse(text)))
    }

    func testTheCommittedContract_IsWhatTheDeclarationsMake() throws {
        let (text, document) = try committed()
        let made = ControlContract.document(from: document).pretty
        if ProcessInfo.processInfo.environment["APPLEID_MOCK_WRITE_CONTRACT"] == "1" {
            if made != text { try made.write(to: Self.file, atomically: true, encoding: .utf8) }
            return
        }
        XCTAssertTrue(made == text, "openapi.json differs from what the declarations make: run scripts/contract\n"
                      + Self.firstDifference(made, text))
    }

    func testADeclaredField_ChangesTheContract_AndTheCommittedFileNoLongerMatches() throws {
        let (text, document) = try committed()
        // The twin: one field more in one declaration, and the document is no longer the file.
        var operations = ControlOperations.all
        let index = try XCTUnwrap(operations.firstIndex { $0.id == "moveClock" })
        var clock = operations[index]
        let fields = try XCTUnwrap(clock.body).schema.fieldNames(components: ControlSchemas.byName)
        XCTAssertEqual(fields, ["advance", "set", "freeze"])
        clock.body = .fields([.optional("advance", .number.orNull), .optional("set", .string.orNull), .optional("freeze", .boolean.orNull),
                              .optional("speed", .number.doc("A field no route reads."))])
        operations[index] = clock
        let made = ControlContract.document(from: document, operations: operations)
        XCTAssertNotEqual(made.pretty, text)
        let body = made["paths"]?["/__mock/clock"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"]
        XCTAssertEqual(body?["properties"]?.members.map(\.key), ["advance", "set", "freeze", "speed"])
        XCTAssertEqual(body?["additionalProperties"], .bool(false))
    }

    func testTheAppleHalf_StaysAsWritten_AndTheControlHalfIsOnlyTheDeclarations() throws {
        let (_, document) = try committed()
        let made = ControlContract.document(from: document)
        let paths = made["paths"]?.members.map(\.key) ?? []
        let apple = document["paths"]?.members.filter { !$0.key.hasPrefix("/__mock") } ?? []
        XCTAssertEqual(Array(made["paths"]?.members.prefix(apple.count) ?? []), apple, "Apple's paths are not kept as written")
        var declared: [String] = []
        for operation in ControlOperations.all where !declared.contains(operation.path) { declared.append(operation.path) }
        XCTAssertEqual(Array(paths.dropFirst(apple.count)), declared)
        // Every declaration's id is unique, and every method and path is declared once.
        XCTAssertEqual(Set(ControlOperations.all.map(\.id)).count, ControlOperations.all.count)
        XCTAssertEqual(Set(ControlOperations.all.map { "\($0.method.rawValue) \($0.path)" }).count, ControlOperations.all.count)
    }

    func testEveryControlRoute_IsADeclaration_AndRefusesAFieldItsDeclarationLacks() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let routes = mock.routes.routes.filter { $0.template.hasPrefix("/__mock") }
        XCTAssertEqual(Set(routes.map { "\($0.method.rawValue) \($0.template)" }),
                       Set(ControlOperations.all.map { "\($0.method.rawValue) \($0.path)" }))
        // Each handler reads its own declaration: a field no declaration of it names is refused,
        // naming the ones it declares (the body's, or the query's), whichever route it is.
        var checked = 0
        for operation in ControlOperations.all {
            var target = operation.path
            for parameter in operation.parameters where parameter.location == .path {
                target = target.replacingOccurrences(of: "{\(parameter.name)}", with: parameter.example.map { $0.replacingOccurrences(of: "\"", with: "") } ?? "x")
            }
            let query = operation.parameters.filter { $0.location == .query }.map(\.name)
            let answer: HTTPResponse
            let expected: String
            if operation.body != nil {
                answer = await mock.respond(operation.method, target, headers: ["Content-Type": "application/json"], body: Array(#"{"shoe_size":1}"#.utf8))
                expected = "unknown field (expected one of: \(operation.bodyFields.joined(separator: ", ")))"
            } else if !query.isEmpty {
                answer = await mock.respond(operation.method, target + "?shoe_size=1")
                expected = "unknown parameter (expected \(query.joined(separator: ", ")))"
            } else {
                continue
            }
            XCTAssertEqual(answer.status.code, 400, "\(operation.id): \(answer.text)")
            // A fault's body is a scenario fault, read by the scenario's own reader.
            let message = operation.id == "addFault" ? "unknown key (expected one of: \(FaultSpec.keys.joined(separator: ", ")))" : expected
            XCTAssertEqual(answer.text, #"{"error":"\#(message)","field":"shoe_size"}"#, operation.id)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 20)
    }

    func testEveryDeclaredStringBound_IsTheOneItsEndpointEnforces() async throws {
        // A declaration that says "at most N bytes" while its endpoint takes more (or fewer) would
        // send a client that trusts the contract a 400 it did not expect, or let through what the
        // contract refuses. Each bounded string field of every body is sent with N bytes, then N + 1,
        // over the operation's own first example (or its required fields' plain values).
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        var checked = 0
        var found: [String] = []
        for operation in ControlOperations.all {
            guard let body = operation.body, case .object(let examples)? = body.examples.map(ContractJSON.parsed),
                  let sample = examples.first?.value["value"] else { continue }
            for (name, maxLength) in Self.boundedStrings(body.schema) {
                for (length, refused) in [(maxLength, false), (maxLength + 1, true)] {
                    var fields = sample.members.filter { $0.key != name }
                    fields.append(.init(key: name, value: .string(String(repeating: "a", count: length))))
                    let answer = await mock.postJSON(operation.path, ContractJSON.object(fields).pretty)
                    // Refused: a 400 naming the field. Taken: no 400 naming it for its length.
                    let namesField = answer.status.code == 400 && answer.text.contains("\"field\":\"\(name)\"")
                    let tooLong = refused ? namesField : namesField && (answer.text.contains("at most") || answer.text.contains("\(maxLength)"))
                    if tooLong != refused {
                        found.append("\(operation.id).\(name) at \(length) bytes (declared at most \(maxLength)): \(answer.status.code) \(answer.text)")
                    }
                }
                checked += 1
            }
            try await mock.reset()
        }
        XCTAssertEqual(found, [])
        XCTAssertGreaterThan(checked, 20)
    }

    /// The string fields of a body schema that declare `maxLength`, with it: its own, and its
    /// first `oneOf` shape's (the one its example takes).
    private static func boundedStrings(_ schema: ContractSchema) -> [(String, Int)] {
        var node = schema.json
        if case .array(let shapes)? = node["oneOf"], let first = shapes.first { node = first }
        return node["properties"]?.members.compactMap { member in
            guard case .number(let text)? = member.value["maxLength"], let bound = Int(text) else { return nil }
            return (member.key, bound)
        } ?? []
    }

    /// Where two texts first part, with a little of each.
    private static func firstDifference(_ made: String, _ committed: String) -> String {
        let left = made.split(separator: "\n", omittingEmptySubsequences: false)
        let right = committed.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) where index >= left.count || index >= right.count || left[index] != right[index] {
            let made = index < left.count ? String(left[index]) : "(end)"
            let file = index < right.count ? String(right[index]) : "(end)"
            return "line \(index + 1):\n  declarations: \(made)\n  committed:    \(file)"
        }
        return "no line differs"
    }
}
