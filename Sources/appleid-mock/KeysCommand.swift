import AppleIDMock
import FoundationEssentials
import JOSE

/// `appleid-mock keys`: a running mock's signing keys (list, rotate, publish, activate,
/// retire), or fresh key files for a scenario (generate).
enum KeysCommand {
    static let usage = """
    usage: appleid-mock keys [list]                 the running mock's keys and their states
           appleid-mock keys rotate                 publish a fresh key and make it sign
           appleid-mock keys publish [--kid KID] [--pem FILE]
                                                    publish a key (fresh unless --pem) without signing
           appleid-mock keys activate KID           make a published key sign new tokens
           appleid-mock keys retire KID             take a key off /auth/keys (not the signing one)
           [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token T]
           appleid-mock keys generate --out DIR [--count N]

    \(ControlClient.optionsUsage)

    generate (works offline):

      --out DIR    where to write: DIR/signing/<kid>.pem (RSA-2048, PKCS#8) and
                   DIR/AuthKey_<KEY_ID>.p8 (P-256); existing files are never overwritten
      --count N    signing keys to make, 1 to 10 (default 3)

    Prints each file written and the developer key's public PEM for a scenario's
    developer_keys[].public_key. Keys made here are for tests only.
    """

    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        guard arguments.first == "generate" else { return try control(arguments, environment: environment) }
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
        let keyID = { () -> String in var random = RandomSource.system; return random.string(10, alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") }()
        let developerKey = try P256PrivateKey.generate()
        try write(developerKey.pkcs8PEM, to: join(out, "AuthKey_\(keyID).p8"))
        Output.out("developer key id: \(keyID)\npublic key:\n\(try developerKey.publicKey.pem)")
        return 0
    }

    /// The subcommands that talk to a running mock.
    private static func control(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["kid", "pem"]), usage: usage)
        let command = parsed.positionals.first ?? "list"
        if command != "publish" && (parsed.options["kid"] != nil || parsed.options["pem"] != nil) {
            throw UsageError(message: "--kid and --pem go with publish", usage: usage)
        }
        let client = { () throws -> ControlClient in try ControlClient(parsed, environment: environment, usage: usage) }
        switch command {
        case "list":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(try client().call("GET", "/__mock/keys"))
        case "rotate":
            try parsed.requirePositionals(1, usage: usage)
            Output.out(try client().call("POST", "/__mock/keys/rotate"))
        case "publish":
            try parsed.requirePositionals(1, usage: usage)
            var body = JSONObject()
            if let kid = parsed.options["kid"] {
                guard ScenarioRules.isKeyID(kid) else { throw UsageError(message: "--kid: \(ScenarioRules.keyIDExpectation)", usage: usage) }
                body["kid"] = .string(kid)
            }
            if let path = parsed.options["pem"] {
                do {
                    body["pem"] = .string(try BoundedFile.text(path, limit: 64 * 1024))
                } catch {
                    throw UsageError(message: "--pem \(path): \(error.message)", usage: usage)
                }
            }
            Output.out(try client().call("POST", "/__mock/keys", body: body))
        case "activate", "retire":
            try parsed.requirePositionals(2, usage: usage)
            guard parsed.positionals.count == 2 else { throw UsageError(message: "\(command) needs a KID", usage: usage) }
            let kid = parsed.positionals[1]
            guard ScenarioRules.isKeyID(kid) else { throw UsageError(message: "KID: \(ScenarioRules.keyIDExpectation)", usage: usage) }
            Output.out(command == "activate" ? try client().call("POST", "/__mock/keys/\(kid)/activate") : try client().call("DELETE", "/__mock/keys/\(kid)"))
        default:
            throw UsageError(message: "unknown subcommand \"\(command)\"", usage: usage)
        }
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
