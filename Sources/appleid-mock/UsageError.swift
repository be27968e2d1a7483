/// Bad command-line input: printed to stderr with the command's usage, exit code 2.
struct UsageError: Error {
    /// What is wrong.
    let message: String
    /// The usage text of the command that failed.
    let usage: String
}

/// A request for help: usage goes to stdout, exit code 0.
struct HelpRequested: Error {
    /// The usage text.
    let usage: String
}
