import AppleIDMock
import FoundationEssentials
import Glibc
import JOSE

/// `appleid-mock client-secret`: mints the ES256 client_secret JWT Apple expects.
enum ClientSecretCommand {
    static let usage = """
    usage: appleid-mock client-secret [--scenario FILE] [--team TEAM_ID] [--key-id KEY_ID]
                                      [--key FILE.p8] [--client CLIENT_ID] [--lifetime SECONDS]
                                      [--issued-at UNIX_SECONDS]

      --scenario FILE   where the team, key id and client come from (default: built-in)
      --team TEAM_ID    the iss (default: the scenario's first team, MOCKTEAM01)
      --key-id KEY_ID   the kid (default: the team's first developer key, MOCKKEY001)
      --key FILE.p8     the private key (default: Keys/AuthKey_<KEY_ID>.p8; for MOCKKEY001,
                        the built-in copy of the committed test key when that file is not there)
      --client ID       the sub (default: the team's first Services ID, com.example.web)
      --lifetime SECS   exp - iat, at most 15777000 (default 3600)
      --issued-at SECS  the iat (default: now)

    Prints the JWT on one line.
    """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ["scenario", "team", "key-id", "key", "client", "lifetime", "issued-at"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        var scenario = Scenario.default
        if let path = parsed.options["scenario"] {
            do { scenario = try Scenario.load(path: path) } catch { throw CommandFailure(message: "scenario \(path):\n\(error)", status: 2) }
        }
        let teamID = parsed.options["team"] ?? scenario.teams.first?.teamID ?? ""
        guard let team = scenario.teams.first(where: { $0.teamID == teamID }) else {
            throw UsageError(message: "--team \(teamID): no such team in the scenario", usage: usage)
        }
        let keyID = parsed.options["key-id"] ?? team.developerKeys.first?.keyID ?? ""
        let clientID = parsed.options["client"]
            ?? (team.clients.first { $0.kind == .servicesID } ?? team.clients.first)?.clientID ?? ""
        let lifetime = try parsed.integer("lifetime", default: 3600, range: 1...ClientSecret.maxLifetime, usage: usage)
        let issuedAt = try parsed.integer("issued-at", default: Int(Date().timeIntervalSince1970), range: 0...Int(Int32.max) * 2, usage: usage)
        let keyPath = parsed.options["key"] ?? "Keys/AuthKey_\(keyID).p8"
        let pem: String
        if parsed.options["key"] == nil, access(keyPath, F_OK) != 0, let builtIn = BuiltInKeys.developerKey(keyID) {
            // Run outside the checkout: the committed test key is built in.
            pem = builtIn
        } else {
            do {
                pem = try BoundedFile.text(keyPath, limit: 64 * 1024)
            } catch {
                throw UsageError(message: "--key \(keyPath): \(error.message)", usage: usage)
            }
        }
        let key: P256PrivateKey
        do { key = try P256PrivateKey(pem: pem) } catch {
            throw UsageError(message: "--key \(keyPath): expected a P-256 private key in PKCS#8 PEM (.p8): \(error)", usage: usage)
        }
        let secret = try ClientSecret.make(teamID: teamID, keyID: keyID, clientID: clientID, privateKey: key,
                                           issuedAt: Int64(issuedAt), lifetime: lifetime)
        Output.out(secret)
        return 0
    }
}
