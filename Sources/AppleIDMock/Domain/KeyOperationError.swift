/// Why a key operation was refused; the control API answers 404 or 409 naming the kid.
public enum KeyOperationError: Error, Equatable, Sendable {
    /// No key with this kid.
    case unknown(String)
    /// A key with this kid exists (or existed) already.
    case duplicate(String)
    /// The signing key cannot be retired: activate another first.
    case retiringActive(String)
    /// A retired key cannot come back.
    case retired(String)
    /// As many keys as `signing_keys.max_published` are published already (probe finding N7).
    case tooMany(String, limit: Int)
    /// Under `--seed`, other operations kept publishing keys while this one made its own (busy
    /// concurrent key operations on a seeded mock).
    case keySequenceMoved
}
