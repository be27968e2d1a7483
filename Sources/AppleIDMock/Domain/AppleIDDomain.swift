import FoundationEssentials
import JOSE
import Synchronization

/// The Apple domain, and the one door into the mock's state: every operation (sign-in, token,
/// revoke, migration, account events, the clock, keys, users, faults, reset, relay verdicts,
/// credential state) and every read is a method here, over the state owner (`owner`, whose
/// `World` changes only through events) and the record of events its callers read. Pure logic —
/// no sockets, no HTTP types: methods take decoded input and return values (the endpoints parse
/// requests and render Apple's answers), run one state operation each, and sign outside the
/// lock; key generation runs on `blockingWork`, off the I/O loops and the cooperative pool.
package final class AppleIDDomain: Sendable {
    /// The scenario being served.
    package let scenario: Scenario
    /// The `iss` minted into tokens.
    let issuer: String
    /// Every client with its team, tag and app group.
    package let clients: ClientDirectory
    /// client_secret checks.
    package let clientSecrets: ClientSecretVerifier
    /// Everything that changes.
    let owner: StateOwner
    /// The thread key generation, rotations and clock moves run on, off the pool.
    let blockingWork = BlockingWork()
    /// The key `retired-key` forgeries sign with before any key was retired (made on first use).
    let forgeryKey = Mutex<KeyRing.SigningKey?>(nil)
    /// How many faults act on requests and on notifications now.
    let faultCounts = FaultCounts()
    /// What the domain says about what it chose on its own.
    let log: @Sendable (String) -> Void

    /// Builds the domain from a configuration: checks the scenario, loads the signing keys, or
    /// takes up `restored`, a state file's record (which starts from the keys it began with).
    /// `durable`: a state file is written, so answers wait for their changes' commit (the
    /// caller opens the file and runs its writer; the domain never touches it).
    init(configuration: AppleIDMockConfiguration, restored: StoredState? = nil, durable: Bool = false) throws(AppleIDMockError) {
        // A scenario built in Swift gets the same rules as a file: the domain trusts no index
        // or count the rules do not guarantee.
        // The built-in scenario is known to pass them (ScenarioLoaderTests), and one read from a
        // file passed them as it was read: checking again would only cost a start its time.
        if configuration.scenario != .default && !Scenario.wasLoaded(configuration.scenario) {
            do {
                try Scenario.check(configuration.scenario)
            } catch {
                throw .scenario(error)
            }
        }
        scenario = configuration.scenario
        issuer = configuration.issuer
        log = configuration.logger(.warn)
        do {
            clients = try ClientDirectory(scenario: configuration.scenario)
        } catch {
            throw .scenario(ScenarioError(path: "teams", message: "client ids \"\(error.first)\" and \"\(error.second)\" collide in the token format; rename one"))
        }
        clientSecrets = ClientSecretVerifier(scenario: configuration.scenario, realTime: configuration.realTime)
        let random = configuration.randomSource
        // A restart signs with the keys the state began with, generated ones included: the keys
        // directory is neither read nor topped up (nor reported on) again.
        let startRing: KeyRing
        if let genesis = restored?.genesis {
            do {
                startRing = try KeyRing(keys: genesis.keys, activeKeyID: genesis.activeKeyID)
            } catch {
                throw .keys(error)
            }
        } else {
            startRing = try Self.loadRing(configuration)
        }
        let context = DomainContext(scenario: configuration.scenario, clients: clients, issuer: configuration.issuer, ring: startRing,
                                    keySeed: random.derived("keys"), codeCapacity: max(1, configuration.maxPendingCodes),
                                    faultSeed: random.derived("faults"))
        owner = StateOwner(context: context, realTime: configuration.realTime, random: random, restored: restored,
                           barrier: CommitBarrier(enabled: durable))
        let counts = faultCounts
        counts.store(owner.read { world, _ in world.faults.counts })
        owner.events.subscribe { [weak owner] in if let owner { counts.store(owner.read { world, _ in world.faults.counts }) } }
    }

    /// The keys a mock starts with: the keys directory's (the scenario's, or `--keys`), topped
    /// up to `signing_keys.count`, or the binary's copies of the committed test keys when the
    /// default directory is absent; what it decided is said on the log.
    private static func loadRing(_ configuration: AppleIDMockConfiguration) throws(AppleIDMockError) -> KeyRing {
            let settings = configuration.scenario.signingKeys
            let ring: KeyRing
            do {
                ring = try KeyRing.load(count: settings.count, directory: configuration.keysDirectory ?? settings.directory,
                                        activeKeyID: settings.activeKeyID, random: configuration.randomSource)
            } catch .directoryMissing(let path) where configuration.keysDirectory == nil && settings.directory == Scenario.SigningKeys.defaultDirectory {
                // Only the built-in default (relative Keys/signing, absent when run from elsewhere)
                // falls back, to the binary's copies of those same committed keys, and says so; any
                // other directory a scenario names must exist.
                // Files there win, so a Keys/signing of one's own is still read.
                do {
                    ring = try KeyRing.builtIn(count: settings.count, activeKeyID: settings.activeKeyID, random: configuration.randomSource)
                } catch {
                    throw .keys(error)
                }
                let served = ring.keys.prefix(BuiltInKeys.signing.count).map(\.keyID).joined(separator: ", ")
                let extra = settings.count - BuiltInKeys.signing.count
                let generated = extra > 0 ? " and \(extra) fresh in-memory key\(extra == 1 ? "" : "s")" : ""
                configuration.logger(.warn)("no \(path) in the working directory; serving the built-in copies of its test keys (\(served))\(generated)")
            } catch {
                throw .keys(error)
            }
            if let directory = configuration.keysDirectory ?? settings.directory, BoundedFile.isDirectory(directory) {
                reportCountMismatch(directory: directory, ring: ring, count: settings.count, log: configuration.logger(.warn))
            }
        return ring
    }

    /// Says on the log how a keys directory whose number of files is not `signing_keys.count`
    /// was served: topped up with keys that change at every start, or cut to the first files by
    /// name.
    private static func reportCountMismatch(directory: String, ring: KeyRing, count: Int, log: @Sendable (String) -> Void) {
        let names = KeyRing.keyFileNames(in: directory)
        guard names.count != count, !names.isEmpty else { return }
        let files = "\(directory) has \(names.count) key file\(names.count == 1 ? "" : "s") but signing_keys.count is \(count)"
        if names.count < count {
            let generated = ring.keys.dropFirst(names.count).map(\.keyID).joined(separator: ", ")
            log("\(files): serving them and \(count - names.count) fresh in-memory key\(count - names.count == 1 ? "" : "s") (\(generated)), new at every start")
        } else {
            let ignored = names.dropFirst(count).map { String($0.dropLast(4)) }.joined(separator: ", ")
            log("\(files): serving the first \(count) by name and ignoring \(ignored)")
        }
    }


    /// Signs `claims` with `key` as an RS256 compact JWS with header `{"kid":…,"alg":"RS256"}`.
    func sign(_ claims: IdentityTokenClaims, with key: KeyRing.SigningKey?) throws(JOSEError) -> String {
        guard let key else { throw JOSEError.invalidKey("no signing key is published") }
        return try CompactJWS.signRS256(payload: JSONWriter.compact(.object(claims.json(scenario.compatibility))), kid: key.keyID,
                                        key: key.privateKey).compact
    }

    /// Signs `claims` as `sign(_:with:)` does, spoiled as `defect` says (nil: genuine).
    func sign(_ claims: IdentityTokenClaims, with key: KeyRing.SigningKey?, defect: TokenDefect?) throws -> String {
        guard let defect else { return try sign(claims, with: key) }
        return try sign(claims: claims.json(scenario.compatibility), with: key, defect: defect, nonce: claims.nonce)
    }
}

