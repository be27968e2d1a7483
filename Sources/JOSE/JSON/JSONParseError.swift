/// Why and where JSON text was rejected.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset of the offending byte (or of the end of input), from 0.
    public var offset: Int
    /// Line of `offset`, from 1; lines end at `\n`.
    public var line: Int
    /// Column of `offset` in bytes from the line start, from 1.
    public var column: Int
    /// What was wrong, e.g. `expected ',' or '}'`.
    public var message: String

    /// An error with an explicit position.
    public init(offset: Int, line: Int, column: Int, message: String) {
        self.offset = offset
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line 3, column 7: expected ',' or '}'`.
    public var description: String {
        "line \(line), column \(column): \(message)"
    }
}
