/// The state file cannot take what an answer depends on (its writer's commits fail: a full disk,
/// a read-only or failing one). The answer is a 503 saying so, at once, instead of a wait without
/// end; the change stays in memory and is committed when the writer next succeeds.
struct CommitFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why, as health says it: `not writable (disk full)`.
    package var reason: String

    /// `state file: not writable (disk full)`.
    package var description: String { "state file: \(reason)" }
}
