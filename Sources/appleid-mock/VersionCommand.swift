import AppleIDMock

/// `appleid-mock version` (or `--version`): prints `appleid-mock <version>`.
enum VersionCommand {
    static let usage = """
    usage: appleid-mock version | --version

    Prints "appleid-mock <version>" on one line.
    """

    /// Prints the version; takes no arguments.
    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: [], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        Output.out("appleid-mock \(AppleIDMockVersion.current)")
        return 0
    }
}
