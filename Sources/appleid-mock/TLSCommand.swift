import FoundationEssentials
import MiniHTTP

/// `appleid-mock tls generate`: a test CA and a server certificate for standing in for
/// appleid.apple.com over HTTPS.
enum TLSCommand {
    static let usage = """
    usage: appleid-mock tls generate --out DIR [--name NAME]... [--days N] [--force]

    Writes exactly three files to DIR (created if missing):
      ca.pem     a throwaway test CA: what clients trust (SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
                 curl --cacert, a JVM trust store, `serve --notification-ca`, `health --ca`)
      cert.pem   a server certificate it issued, then the CA: `serve --tls-cert`
      key.pem    the server's P-256 private key, PKCS#8, mode 0600: `serve --tls-key`
    The certificate names appleid.apple.com, localhost, 127.0.0.1, ::1 and every --name (a DNS
    name, e.g. a Docker service, or an IP address).

      --out DIR    where to write
      --name NAME  one more name the certificate covers (repeatable)
      --days N     validity, 1 to 825 days (default 825)
      --force      overwrite existing files (otherwise an existing file is an error)

    The CA's key is not kept: nothing else can ever be issued under it. For tests only.
    """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.first == "generate" else {
            throw UsageError(message: arguments.first.map { "unknown tls command \"\($0)\"" } ?? "missing tls command (generate)", usage: usage)
        }
        let parsed = try ParsedArguments(Array(arguments.dropFirst()), options: ["out", "name", "days"], flags: ["force"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let out = parsed.options["out"], !out.isEmpty else { throw UsageError(message: "--out is required", usage: usage) }
        let days = try parsed.integer("days", default: 825, range: 1...825, usage: usage)
        var names = ["appleid.apple.com", "localhost", "127.0.0.1", "::1"]
        for name in parsed.repeated["name"] ?? [] where !names.contains(name) {
            guard !name.isEmpty, name.utf8.count <= 253 else { throw UsageError(message: "--name expects a DNS name or an IP address, got \"\(name)\"", usage: usage) }
            names.append(name)
        }
        let authority: TestCertificateAuthority
        do {
            authority = try TestCertificateAuthority(names: names, days: days)
        } catch {
            throw UsageError(message: "--name: \(error.message)", usage: usage)
        }
        let files = [("ca.pem", authority.caPEM, 0o644), ("cert.pem", authority.chainPEM, 0o644), ("key.pem", authority.keyPEM, 0o600)]
        let force = parsed.flags.contains("force")
        if !force {
            for (name, _, _) in files where FileManager.default.fileExists(atPath: join(out, name)) {
                throw CommandFailure(message: "\(join(out, name)) exists; refusing to overwrite (--force to replace)", status: 1)
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(message: "cannot create \(out): \(error)", status: 1)
        }
        for (name, text, mode) in files {
            let path = join(out, name)
            if force { try? FileManager.default.removeItem(atPath: path) }
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
                throw CommandFailure(message: "cannot write \(path)", status: 1)
            }
            Output.out("wrote \(path)")
        }
        Output.out("names: \(names.joined(separator: ", "))")
        return 0
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
