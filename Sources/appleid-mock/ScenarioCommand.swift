import AppleIDMock

/// `appleid-mock scenario print|check`.
enum ScenarioCommand {
    static let usage = """
    usage: appleid-mock scenario print          write the built-in scenario as JSON
           appleid-mock scenario check FILE     validate FILE; each problem names its JSON path (exit 2);
                                                a rotation pattern that cannot keep 3 to 5 keys published is a warning
    """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: [], usage: usage)
        switch parsed.positionals.first {
        case "print":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(Scenario.default.prettyJSON)
            return 0
        case "check":
            try parsed.requirePositionals(2, usage: usage)
            guard parsed.positionals.count == 2 else { throw UsageError(message: "check needs a FILE", usage: usage) }
            let path = parsed.positionals[1]
            let scenario: Scenario
            do {
                scenario = try Scenario.load(path: path)
            } catch {
                throw CommandFailure(message: "\(path):\n\(error)", status: 2)
            }
            Output.out("\(path): ok")
            // A pattern the mock can run but Apple's JWKS never looks like: said, not refused.
            if let advice = scenario.signingKeys.rotation?.publishedRangeAdvice {
                Output.err("appleid-mock: warning: \(path): signing_keys.rotation \(advice)")
            }
            return 0
        case let other?:
            throw UsageError(message: "unknown subcommand \"\(other)\"", usage: usage)
        case nil:
            throw UsageError(message: "missing subcommand (print or check)", usage: usage)
        }
    }
}
