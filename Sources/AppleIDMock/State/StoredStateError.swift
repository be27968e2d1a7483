/// Why a state file's JSON was refused: the JSON path of the offending value (`events[3].grant.scopes`,
/// `$` for the whole document) and what was expected there.
struct StoredStateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// JSON path such as `events[3].grant.expires_at`.
    package var path: String
    /// What was expected, e.g. `expected an integer`.
    package var message: String

    /// An error at `path`.
    init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, e.g. `grant.expires_at: expected an integer`.
    package var description: String { "\(path): \(message)" }
}
