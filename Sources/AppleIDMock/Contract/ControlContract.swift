/// The contract's control half, made from the declarations (`ControlOperations`, `ControlSchemas`,
/// `ControlRefusals`): the `/__mock` paths, the component schemas and shared responses they use,
/// and the `controlToken` scheme. The Apple half stays as written in `openapi.json`: it describes
/// Apple, not the mock. `scripts/contract` writes the whole file; a test fails while the committed
/// file differs from what the declarations make.
enum ControlContract {
    /// Where the control half lives in the document.
    static let prefix = "/__mock"

    /// `committed` with its control half replaced by what the declarations make: paths outside
    /// `/__mock` and components no declaration makes stay as they are, in their order; the
    /// declared ones follow, in declaration order.
    static func document(from committed: ContractJSON, operations: [ControlOperation] = ControlOperations.all) -> ContractJSON {
        .object(committed.members.map { member in
            switch member.key {
            case "paths":
                let apple = member.value.members.filter { !$0.key.hasPrefix(prefix) }
                return .init(key: member.key, value: .object(apple + paths(operations)))
            case "components":
                return .init(key: member.key, value: .object(member.value.members.map(components)))
            default:
                return member
            }
        })
    }

    /// The control paths, each with its operations in declaration order.
    static func paths(_ operations: [ControlOperation]) -> [ContractJSON.Member] {
        var order: [String] = []
        var methods: [String: [ContractJSON.Member]] = [:]
        for operation in operations {
            if methods[operation.path] == nil { order.append(operation.path) }
            methods[operation.path, default: []].append(.init(key: operation.method.rawValue.lowercased(), value: json(operation)))
        }
        return order.map { .init(key: $0, value: .object(methods[$0] ?? [])) }
    }

    /// One section of `components` with the declared entries in place of the written ones.
    private static func components(_ section: ContractJSON.Member) -> ContractJSON.Member {
        let declared: [ContractJSON.Member]
        switch section.key {
        case "schemas": declared = ControlSchemas.all.map { .init(key: $0.0, value: $0.1.json) }
        case "responses": declared = ControlRefusals.all.map { .init(key: $0.name, value: $0.shape.json) }
        case "securitySchemes": declared = [.init(key: "controlToken", value: controlToken)]
        default: return section
        }
        let names = Set(declared.map(\.key))
        return .init(key: section.key, value: .object(declared + section.value.members.filter { !names.contains($0.key) }))
    }

    /// The bearer token a mock started with `--control-token` asks for.
    static let controlToken: ContractJSON = .members([
        ("type", "http"), ("scheme", "bearer"), ("description", "The `--control-token` the mock was started with; needed only then."),
    ])

    /// One operation as the document writes it.
    static func json(_ operation: ControlOperation) -> ContractJSON {
        var members: [(String, ContractJSON)] = [
            ("tags", .array(operation.tags.map { .string($0) })),
            ("summary", .string(operation.summary)),
            ("description", .string(operation.description)),
            ("operationId", .string(operation.id)),
        ]
        if !operation.parameters.isEmpty { members.append(("parameters", .array(operation.parameters.map(json)))) }
        if let body = operation.body {
            var content: [(String, ContractJSON)] = [("schema", body.schema.json)]
            if let examples = body.examples { content.append(("examples", .parsed(examples))) }
            var request: [(String, ContractJSON)] = []
            if let required = body.required { request.append(("required", .bool(required))) }
            request.append(("content", .members([("application/json", .members(content))])))
            members.append(("requestBody", .members(request)))
        }
        members.append(("responses", .members(operation.answers.map { answer in
            switch answer.kind {
            case .shared(let refusal): (String(answer.status), .members([("$ref", .string("#/components/responses/" + refusal.name))]))
            case .own(let shape): (String(answer.status), shape.json)
            }
        })))
        if operation.secured { members.append(("security", [.object([]), .members([("controlToken", .array([]))])])) }
        return .members(members)
    }

    private static func json(_ parameter: ControlParameter) -> ContractJSON {
        var members: [(String, ContractJSON)] = [("name", .string(parameter.name)), ("in", .string(parameter.location.rawValue))]
        if let doc = parameter.doc { members.append(("description", .string(doc))) }
        members.append(("required", .bool(parameter.required)))
        members.append(("schema", parameter.schema.json))
        if let example = parameter.example { members.append(("example", .parsed(example))) }
        return .members(members)
    }
}

extension ContractJSON: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: ContractJSON...) { self = .array(elements) }
}
