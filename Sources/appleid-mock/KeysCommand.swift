import AppleIDMock
import FoundationEssentials
import JOSE

/// `appleid-mock keys generate`: fresh signing keys and a developer key, test use only.
enum KeysCommand {
    static let usage = """
    usage: appleid-mock keys generate --out DIR [--count N]

      --out DIR    where to write: DIR/signing/<kid>.pem (RSA-2048, PKCS#8) and
                   DIR/AuthKey_<KEY_ID>.p8 (P-256); existing files are never overwritten
      --count N    signing keys to make, 1 to 10 (default 3)

    Prints each file written and the developer key's public PEM for a scenario's
    developer_keys[].public_key. Keys made here are for tests only.
    """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.first == "generate" else {
            if let first = arguments.first, first == "--help" || first == "-h" { throw HelpRequested(usage: usage) }
            throw UsageError(message: arguments.isEmpty ? "missing subcommand (generate)" : "unknown subcommand \"\(arguments[0])\"", usage: usage)
        }
        let parsed = try ParsedArguments(Array(arguments.dropFirst()), options: ["out", "count"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let out = parsed.options["out"] else { throw UsageError(message: "--out is required", usage: usage) }
        let count = try parsed.integer("count", default: 3, range: 1...10, usage: usage)
        let signing = join(out, "signing")
        do {
            try FileManager.default.createDirectory(atPath: signing, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(message: "cannot create \(signing): \(error)", status: 1)
        }
        for _ in 0..<count {
            let key = try KeyRing.generate()
            try write(key.privateKey.pkcs8PEM, to: join(signing, "\(key.keyID).pem"))
        }
        let keyID = RandomSource.system.string(10, alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let developerKey = try P256PrivateKey.generate()
        try write(developerKey.pkcs8PEM, to: join(out, "AuthKey_\(keyID).p8"))
        Output.out("developer key id: \(keyID)\npublic key:\n\(developerKey.publicKey.pem)")
        return 0
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func write(_ text: String, to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(message: "\(path) exists; refusing to overwrite", status: 1)
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure(message: "cannot write \(path)", status: 1)
        }
        Output.out("wrote \(path)")
    }
}
