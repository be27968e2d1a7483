/// Why a key operation was refused; the control API answers 404 or 409 naming the kid.
enum KeyOperationError: Error, Equatable, Sendable {
    /// No key with this kid.
    case unknown(String)
    /// A key with this kid exists (or existed) already.
    case duplicate(String)
    /// The signing key cannot be retired: activate another first.
    case retiringActive(String)
    /// A retired key cannot come back.
    case retired(String)
    /// As many keys as `signing_keys.max_published` are published already.
    case tooMany(String, limit: Int)
    /// Under `--seed`, other operations kept publishing keys while this one made its own (busy
    /// concurrent key operations on a seeded mock).
    case keySequenceMoved
    /// OpenSSL could not make a key.
    case generationFailed

    /// What is wrong, in the control API's words.
    var message: String {
        switch self {
        case .unknown: "no key with this kid"
        case .duplicate: "a key with this kid exists already"
        case .retiringActive: "the key signs new tokens: activate another key before retiring it"
        case .retired: "the key is retired"
        case .tooMany(_, let limit):
            "\(limit) keys are published already, the most signing_keys.max_published allows: retire one first (rotate retires the oldest itself)"
        case .keySequenceMoved: "other key operations kept publishing keys meanwhile (--seed derives each key from its place): try again"
        case .generationFailed: "OpenSSL could not generate an RSA key: try again"
        }
    }

    /// The kid the operation named, empty when none.
    var keyID: String {
        switch self {
        case .unknown(let kid), .duplicate(let kid), .retiringActive(let kid), .retired(let kid), .tooMany(let kid, _): kid
        case .keySequenceMoved, .generationFailed: ""
        }
    }
}
