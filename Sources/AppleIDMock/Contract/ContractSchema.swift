/// A JSON Schema (2020-12, as OpenAPI 3.1 takes it) of the control API's contract, built keyword by
/// keyword in the order the document shows them: `.string.orNull.maxLength(64).doc("…")`.
struct ContractSchema: Sendable {
    private(set) var keywords: [(String, ContractJSON)]

    private init(_ keywords: [(String, ContractJSON)]) { self.keywords = keywords }

    /// The schema as the document writes it.
    var json: ContractJSON { .members(keywords) }

    // MARK: - What a value is

    /// A component schema, by name (`#/components/schemas/NAME`).
    static func ref(_ name: String) -> ContractSchema { ContractSchema([("$ref", .string("#/components/schemas/" + name))]) }
    static var string: ContractSchema { type("string") }
    static var integer: ContractSchema { type("integer") }
    static var number: ContractSchema { type("number") }
    static var boolean: ContractSchema { type("boolean") }
    static var object: ContractSchema { type("object") }
    static var array: ContractSchema { type("array") }
    static var null: ContractSchema { type("null") }
    /// A value of any of `names` (`"integer", "string"`).
    static func types(_ names: String...) -> ContractSchema { ContractSchema([("type", .array(names.map { .string($0) }))]) }
    /// No keyword yet: a schema of `oneOf`, `anyOf` or a description alone.
    static var any: ContractSchema { ContractSchema([]) }

    private static func type(_ name: String) -> ContractSchema { ContractSchema([("type", .string(name))]) }

    // MARK: - Keywords

    /// The type, or null too (`"type": [T, "null"]`).
    var orNull: ContractSchema {
        var copy = self
        if let index = copy.keywords.firstIndex(where: { $0.0 == "type" }), case .string(let name) = copy.keywords[index].1 {
            copy.keywords[index].1 = .array([.string(name), .string("null")])
        }
        return copy
    }

    /// Any keyword the named ones below do not cover.
    func keyword(_ name: String, _ value: ContractJSON) -> ContractSchema {
        var copy = self
        copy.keywords.append((name, value))
        return copy
    }

    func doc(_ text: String) -> ContractSchema { keyword("description", .string(text)) }
    func maxLength(_ count: Int64) -> ContractSchema { keyword("maxLength", .number(String(count))) }
    func minLength(_ count: Int64) -> ContractSchema { keyword("minLength", .number(String(count))) }
    func maxItems(_ count: Int64) -> ContractSchema { keyword("maxItems", .number(String(count))) }
    func maxProperties(_ count: Int64) -> ContractSchema { keyword("maxProperties", .number(String(count))) }
    func minimum(_ bound: ContractJSON) -> ContractSchema { keyword("minimum", bound) }
    func maximum(_ bound: ContractJSON) -> ContractSchema { keyword("maximum", bound) }
    func pattern(_ expression: String) -> ContractSchema { keyword("pattern", .string(expression)) }
    func format(_ name: String) -> ContractSchema { keyword("format", .string(name)) }
    func enumeration(_ values: [ContractJSON]) -> ContractSchema { keyword("enum", .array(values)) }
    func constant(_ value: ContractJSON) -> ContractSchema { keyword("const", value) }
    func items(_ schema: ContractSchema) -> ContractSchema { keyword("items", schema.json) }
    func oneOf(_ schemas: [ContractSchema]) -> ContractSchema { keyword("oneOf", .array(schemas.map(\.json))) }
    func anyOf(_ schemas: [ContractSchema]) -> ContractSchema { keyword("anyOf", .array(schemas.map(\.json))) }
    func required(_ names: String...) -> ContractSchema { keyword("required", .array(names.map { .string($0) })) }
    /// The properties, in order.
    func properties(_ properties: KeyValuePairs<String, ContractSchema>) -> ContractSchema {
        keyword("properties", .object(properties.map { ContractJSON.Member(key: $0.key, value: $0.value.json) }))
    }
    /// The properties, in order, from a list made of parts.
    func properties(_ properties: [(String, ContractSchema)]) -> ContractSchema {
        keyword("properties", .object(properties.map { ContractJSON.Member(key: $0.0, value: $0.1.json) }))
    }
    /// No property but those named (`additionalProperties: false`).
    var closed: ContractSchema { keyword("additionalProperties", false) }
    /// Any further property, of `schema` (`additionalProperties: schema`).
    func additional(_ schema: ContractSchema) -> ContractSchema { keyword("additionalProperties", schema.json) }
    /// Any further property of any kind (`additionalProperties: true`).
    var open: ContractSchema { keyword("additionalProperties", true) }

    // MARK: - Reading

    /// The property names a body of this schema may carry: its own, and those of each `oneOf` or
    /// `anyOf` shape, with component references followed through `components`.
    func fieldNames(components: [String: ContractSchema]) -> [String] {
        var names: [String] = []
        func collect(_ node: ContractJSON) {
            if case .string(let target)? = node["$ref"], target.hasPrefix("#/components/schemas/"),
               let schema = components[String(target.dropFirst("#/components/schemas/".count))] {
                collect(schema.json)
            }
            for member in node["properties"]?.members ?? [] where !names.contains(member.key) { names.append(member.key) }
            for key in ["oneOf", "anyOf"] {
                if case .array(let shapes)? = node[key] { shapes.forEach(collect) }
            }
        }
        collect(json)
        return names
    }
}
