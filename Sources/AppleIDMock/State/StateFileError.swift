/// Why a state file cannot be used; the file is left as it was. The CLI exits 2 with the message.
public struct StateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    enum Problem: Equatable, Sendable {
        /// Another running mock (or `state` command) holds it.
        case inUse
        /// Not a database, or a damaged one (SQLite's words, or the record that does not decode).
        case damaged(String)
        /// Written by a newer AppleIDMock (its schema version).
        case newer(Int64)
        /// Another program's SQLite file.
        case foreign
        /// The state of a scenario other than the one being served.
        case otherScenario
        /// There is no such file (commands that read one).
        case missing
        /// A directory, not a file.
        case notAFile
        /// Empty (0 bytes), and no mock made it just now: a copy that failed, a volume restored empty.
        case empty
        /// The file cannot be opened or written (SQLite's words).
        case io(String)
    }

    /// The file's path as given.
    public var path: String
    /// What is wrong.
    var problem: Problem

    /// `state file FILE: …`, saying what to do about it.
    public var description: String {
        let reason = switch problem {
        case .inUse: "in use by another running appleid-mock; stop it, or give this one its own file"
        case .damaged(let detail): "damaged or not a state file (\(detail)); it was left untouched"
        case .newer(let version): "written by a newer AppleIDMock (schema \(version); this one reads up to \(StateFile.schemaVersion)); it was left untouched"
        case .foreign: "a SQLite database of another program, not an AppleIDMock state file; it was left untouched"
        case .otherScenario: "holds the state of another scenario; serve the scenario it was made with (`appleid-mock state export` prints it), or give a new file"
        case .missing: "no such file"
        case .notAFile: "a directory, not a file"
        case .empty: "empty (0 bytes), and no mock made it: a copy that failed, or a volume restored empty? It was left untouched; remove it (or name a new file) to start afresh"
        case .io(let detail): detail
        }
        return "state file \(path): \(reason)"
    }
}
