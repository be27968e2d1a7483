/// Why signing keys could not be loaded.
public enum KeyRingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No keys at all.
    case noKeys
    /// The active key id names no key.
    case unknownKeyID(String)
    /// The keys directory does not exist.
    case directoryMissing(String)
    /// The keys directory holds no `<kid>.pem` file.
    case noKeyFiles(String)
    /// A key file could not be used.
    case unreadable(String, String)
    /// OpenSSL could not generate a key.
    case generationFailed(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .noKeys: "no signing keys"
        case .unknownKeyID(let kid): "active key id \(kid) is not among the signing keys"
        case .directoryMissing(let path): "keys directory \(path) does not exist"
        case .noKeyFiles(let path):
            "keys directory \(path) has no <kid>.pem files"
                + (BoundedFile.isDirectory(path + "/signing") ? " (its signing/ folder has: pass \(path.hasSuffix("/") ? path : path + "/")signing)" : "")
        case .unreadable(let path, let why): "\(path): \(why)"
        case .generationFailed(let why): "key generation failed: \(why)"
        }
    }
}
