/// A path with named segments, `/__mock/keys/{kid}/activate`: a `{name}` segment matches one
/// non-empty segment of a request's path (still percent-encoded); every other segment matches
/// itself exactly.
struct PathTemplate: Sendable {
    private enum Segment: Sendable, Equatable {
        case literal(Substring)
        case parameter(String)
    }

    private let segments: [Segment]
    /// The template as written.
    let text: String

    /// Whether `path` has a `{name}` segment (else it is routed exactly).
    static func isTemplate(_ path: String) -> Bool { path.contains("{") }

    /// The template `text`.
    init(_ text: String) {
        self.text = text
        segments = text.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2
                ? .parameter(String(segment.dropFirst().dropLast())) : .literal(segment)
        }
    }

    /// Literal segments: among templates matching one path, the more literal wins.
    var literalCount: Int { segments.count { if case .literal = $0 { true } else { false } } }

    /// The parameters when `path` matches, else nil.
    func match(_ path: String) -> [String: String]? {
        var parameters: [String: String] = [:]
        var index = 0
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard index < segments.count else { return nil }
            switch segments[index] {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
            index += 1
        }
        return index == segments.count ? parameters : nil
    }
}
