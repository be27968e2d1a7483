import FoundationEssentials
import MiniHTTP

/// `appleid-mock tls generate`: a test CA and a server certificate for standing in for
/// appleid.apple.com over HTTPS.
enum TLSCommand {
    static let usage = """
    usage: appleid-mock tls generate --out DIR [--name NAME]... [--days N] [--force | --keep]

    Writes exactly three files to DIR (created if missing):
      ca.pem     a throwaway test CA: what clients trust (SSL_CERT_FILE, REQUESTS_CA_BUNDLE,
                 curl --cacert, a JVM trust store, `serve --notification-ca`, `health --ca`)
      cert.pem   a server certificate it issued, then the CA: `serve --tls-cert`
      key.pem    the server's P-256 private key, PKCS#8, mode 0600: `serve --tls-key`
    The certificate names appleid.apple.com, appleid.cdn-apple.com (where Apple serves its
    JS), localhost, 127.0.0.1, ::1 and every --name (a DNS name, e.g. a Docker service, or an
    IP address).

      --out DIR    where to write
      --name NAME  one more name the certificate covers (repeatable)
      --days N     validity, 1 to 825 days (default 825)
      --force      overwrite existing files (otherwise an existing file is an error)
      --keep       keep ca.pem, cert.pem and key.pem when all three exist (nothing is written);
                   generate them when none exists; an error naming the files when only some
                   exist. For a one-shot container that may run again (docker-compose.yml).

    The CA's key is not kept: nothing else can ever be issued under it. For tests only.
    """

    static func run(_ arguments: [String]) throws -> Int32 {
        if let first = arguments.first, first == "--help" || first == "-h" || first == "help" { throw HelpRequested(usage: usage) }
        guard arguments.first == "generate" else {
            throw UsageError(message: arguments.first.map { "unknown tls command \"\($0)\"" } ?? "missing tls command (generate)", usage: usage)
        }
        let parsed = try ParsedArguments(Array(arguments.dropFirst()), options: ["out", "name", "days"], flags: ["force", "keep"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        guard let out = parsed.options["out"], !out.isEmpty else { throw UsageError(message: "--out is required", usage: usage) }
        let force = parsed.flags.contains("force"), keep = parsed.flags.contains("keep")
        if force && keep { throw UsageError(message: "--force and --keep exclude each other", usage: usage) }
        let days = try parsed.integer("days", default: 825, range: 1...825, usage: usage)
        var names = ["appleid.apple.com", "appleid.cdn-apple.com", "localhost", "127.0.0.1", "::1"]
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
        let fileNames = ["ca.pem", "cert.pem", "key.pem"]
        // --keep: a one-shot container run again (compose `up` after `up`) leaves a running mock's
        // CA as it is; a partial set is never completed, since the new files would not match.
        if keep {
            let present = fileNames.filter { FileManager.default.fileExists(atPath: join(out, $0)) }
            if present.count == fileNames.count {
                Output.out("kept \(present.map { join(out, $0) }.joined(separator: ", "))")
                return 0
            }
            if !present.isEmpty {
                let missing = fileNames.filter { !present.contains($0) }.map { join(out, $0) }
                throw CommandFailure(message: "--keep: \(present.map { join(out, $0) }.joined(separator: ", ")) "
                    + "\(present.count == 1 ? "exists" : "exist") but \(missing.joined(separator: ", ")) \(missing.count == 1 ? "does" : "do") not; "
                    + "remove the rest or use --force to make all three again", status: 1)
            }
        }
        let files = [(fileNames[0], authority.caPEM, 0o644), (fileNames[1], authority.chainPEM, 0o644), (fileNames[2], authority.keyPEM, 0o600)]
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
