import MiniHTTP

/// One control route, declared once: its method and path, what it reads (query and path
/// parameters, body fields: each a name, a schema with its bounds, whether it is required and a
/// line of doc), what it answers and which refusals it can give. From the declarations come the
/// route table's control routes (`MockRouter.control`), the fields a body may carry
/// (`ControlRequest`), and the control half of `openapi.json` (`ControlContract`), which a test
/// holds to the committed file.
struct ControlOperation: Sendable {
    let method: HTTPMethod
    let path: String
    /// The contract's `operationId`.
    let id: String
    var tags: [String] = ["Control API"]
    /// One line: the route table's summary too.
    let summary: String
    let description: String
    /// Query and path parameters, in order.
    var parameters: [ControlParameter] = []
    /// The JSON body, for a route that takes one.
    var body: ControlBody?
    /// Every answer, by status: its own, or a shared refusal (`ControlRefusal`).
    let answers: [ControlAnswer]
    /// Behind `--control-token` when the mock runs with one (every route but health and the
    /// dashboard's static files).
    var secured = true

    /// Every field the route reads: its parameters, then its body's fields.
    var fieldNames: [String] {
        parameters.map(\.name) + (body?.schema.fieldNames(components: ControlSchemas.byName) ?? []).filter { name in
            !parameters.contains { $0.name == name }
        }
    }

    /// The body's own fields (those a `ControlRequest` for this route takes).
    var bodyFields: [String] { body?.schema.fieldNames(components: ControlSchemas.byName) ?? [] }
}

/// A query or path parameter.
struct ControlParameter: Sendable {
    enum Location: String, Sendable { case query, path }

    let name: String
    let location: Location
    let required: Bool
    let doc: String?
    let schema: ContractSchema
    /// An example value, as JSON text.
    var example: String?

    /// An optional query parameter.
    static func query(_ name: String, _ schema: ContractSchema, doc: String? = nil, example: String? = nil) -> ControlParameter {
        ControlParameter(name: name, location: .query, required: false, doc: doc, schema: schema, example: example)
    }

    /// A query parameter the route cannot do without.
    static func requiredQuery(_ name: String, _ schema: ContractSchema, doc: String? = nil, example: String? = nil) -> ControlParameter {
        ControlParameter(name: name, location: .query, required: true, doc: doc, schema: schema, example: example)
    }

    /// A path segment (`{kid}`).
    static func path(_ name: String, _ schema: ContractSchema, doc: String? = nil, example: String? = nil) -> ControlParameter {
        ControlParameter(name: name, location: .path, required: true, doc: doc, schema: schema, example: example)
    }
}

/// A JSON request body: its schema (an object of fields, or one of several shapes) and examples.
struct ControlBody: Sendable {
    let schema: ContractSchema
    /// Whether a request must carry it (`requestBody.required`); nil leaves the contract silent.
    var required: Bool?
    /// Named examples, as the contract's `examples` object in JSON text.
    var examples: String?

    /// An object of `fields` and no others.
    static func fields(_ fields: [ControlField], doc: String? = nil, required: Bool? = true, examples: String? = nil) -> ControlBody {
        var schema = ContractSchema.object
        if let doc { schema = schema.doc(doc) }
        let needed = fields.filter(\.required).map { ContractJSON.string($0.name) }
        if !needed.isEmpty { schema = schema.keyword("required", .array(needed)) }
        schema = schema.keyword("properties", .object(fields.map { ContractJSON.Member(key: $0.name, value: $0.schema.json) })).closed
        return ControlBody(schema: schema, required: required, examples: examples)
    }

    /// One of several shapes (component references or objects).
    static func shapes(_ shapes: [ContractSchema], required: Bool? = true, examples: String? = nil) -> ControlBody {
        ControlBody(schema: .any.oneOf(shapes), required: required, examples: examples)
    }
}

/// A body field: one line of its declaration.
struct ControlField: Sendable {
    let name: String
    let schema: ContractSchema
    let required: Bool

    /// A field the body must carry.
    static func required(_ name: String, _ schema: ContractSchema) -> ControlField { ControlField(name: name, schema: schema, required: true) }
    /// A field the body may carry.
    static func optional(_ name: String, _ schema: ContractSchema) -> ControlField { ControlField(name: name, schema: schema, required: false) }
}

/// One answer of an operation.
struct ControlAnswer: Sendable {
    let status: Int
    let kind: Kind

    enum Kind: Sendable {
        /// A refusal every route of its kind shares (`#/components/responses/NAME`).
        case shared(ControlRefusal)
        /// The route's own answer.
        case own(ControlResponseShape)
    }

    /// The route's own answer with `status`.
    static func answer(_ status: Int, _ shape: ControlResponseShape) -> ControlAnswer { ControlAnswer(status: status, kind: .own(shape)) }
    /// A shared refusal with `status`.
    static func refusal(_ status: Int, _ refusal: ControlRefusal) -> ControlAnswer { ControlAnswer(status: status, kind: .shared(refusal)) }
}

/// What an answer carries: a description, headers and content by media type.
struct ControlResponseShape: Sendable {
    let description: String
    /// The `headers` object, as JSON text.
    var headers: String?
    var content: [ControlContent] = []

    /// JSON of `schema`, with named examples (the contract's `examples` object, as JSON text).
    static func json(_ description: String, _ schema: ContractSchema, examples: String? = nil, headers: String? = nil) -> ControlResponseShape {
        ControlResponseShape(description: description, headers: headers, content: [ControlContent(mediaType: "application/json", schema: schema, examples: examples)])
    }

    /// Content of another media type.
    static func media(_ description: String, _ mediaType: String, _ schema: ContractSchema, headers: String? = nil) -> ControlResponseShape {
        ControlResponseShape(description: description, headers: headers, content: [ControlContent(mediaType: mediaType, schema: schema, examples: nil)])
    }

    /// No content.
    static func empty(_ description: String, headers: String? = nil) -> ControlResponseShape {
        ControlResponseShape(description: description, headers: headers)
    }

    var json: ContractJSON {
        var members: [(String, ContractJSON)] = [("description", .string(description))]
        if let headers { members.append(("headers", .parsed(headers))) }
        if !content.isEmpty { members.append(("content", .members(content.map { ($0.mediaType, $0.json) }))) }
        return .members(members)
    }
}

/// One media type of an answer.
struct ControlContent: Sendable {
    let mediaType: String
    let schema: ContractSchema
    let examples: String?

    var json: ContractJSON {
        var members: [(String, ContractJSON)] = [("schema", schema.json)]
        if let examples { members.append(("examples", .parsed(examples))) }
        return .members(members)
    }
}

/// A refusal many control routes give alike, declared once (`components/responses`).
struct ControlRefusal: Sendable {
    let name: String
    let shape: ControlResponseShape
}
