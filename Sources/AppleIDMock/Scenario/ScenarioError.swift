/// What is wrong with a scenario file: every problem found, each naming its JSON path.
public struct ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One problem at one place.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// JSON path such as `teams[0].clients[1].redirect_uris[0]`, or `$` for the whole file.
        public var path: String
        /// What was expected there, e.g. `expected an absolute URL`.
        public var message: String

        /// A problem at `path`.
        package init(path: String, message: String) {
            self.path = path
            self.message = message
        }

        /// `path: message`.
        public var description: String { "\(path): \(message)" }
    }

    /// The problems in document order.
    public var problems: [Problem]

    /// A single problem.
    init(path: String, message: String) {
        problems = [Problem(path: path, message: message)]
    }

    /// Several problems.
    init(problems: [Problem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
