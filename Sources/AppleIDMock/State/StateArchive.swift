import FoundationEssentials
import Glibc
import JOSE

/// `appleid-mock state show|export|import`: a state file looked at, saved as JSON a person can
/// read and edit, and made from such JSON to seed a suite. Every call holds the file's lock
/// while it runs, so none works on a file a running mock holds.
package enum StateArchive {
    /// What an archive's `format` says.
    static let format = "appleid-mock-state"

    /// Why an archive cannot be read or written; the CLI exits 2 with the message.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        /// What is wrong, naming the JSON path at fault where there is one.
        package var description: String
    }

    /// A summary of the state in `path`: the scenario, clock, users, consents, codes, keys,
    /// events and notifications.
    package static func show(path: String) throws(Failure) -> String {
        let (file, scenario) = try open(path)
        guard let stored = file.stored else { throw Failure(description: "state file \(path): empty (no mock has started on it)") }
        var configuration = AppleIDMockConfiguration()
        configuration.scenario = scenario
        configuration.log = { _ in }
        let domain: AppleIDDomain
        do {
            domain = try AppleIDDomain(configuration: configuration, restored: stored)
        } catch {
            throw Failure(description: "\(error)")
        }
        let users = domain.users
        let (keys, signingKeyID) = domain.keys
        let reading = domain.clockReading
        let consents = domain.owner.read { world, _ in world.consents.count }
        // The delivery log as a restart rebuilds it from the record.
        var log = NotificationLog(capacity: NotificationDeliverer.logCapacity)
        log.forgottenThrough = stored.forgottenThrough
        NotificationDeliverer.rebuild(&log, events: stored.events, now: 0, scenario: scenario, issuer: domain.issuer)
        let records = log.live
        let lines: [(String, String)] = [
            ("scenario", "\(scenario.teams.count) team\(scenario.teams.count == 1 ? "" : "s"), \(scenario.users.count) user\(scenario.users.count == 1 ? "" : "s")"),
            ("clock", RFC3339.format(Int64(seconds: reading.now)) + (reading.clock.isFrozen ? " (frozen)" : " (running, \(Self.signed(reading.offset)) s from real time)")),
            ("users", "\(users.count) (\(users.filter(\.addedAtRuntime).count) added at runtime, \(users.filter(\.deleted).count) deleted)"),
            ("consents", "\(consents) live"),
            ("codes", "\(domain.pendingCodeCount) pending"),
            ("keys", "\(keys.filter { $0.state != .retired }.count) published, \(keys.filter { $0.state == .retired }.count) retired; signing with \(signingKeyID ?? "none")"),
            ("events", "\(stored.events.count) kept, the last #\(domain.events.lastSequence)"),
            ("notifications", "\(records.count) (\(records.filter { $0.outcome == .pending }.count) undelivered)"),
        ]
        return (["state file \(path) (schema \(StateFile.schemaVersion))"]
                + lines.map { "  " + $0.0 + String(repeating: " ", count: max(1, 15 - $0.0.count)) + $0.1 }).joined(separator: "\n")
    }

    /// Whole seconds with a sign: `+86400`, `-30`, `+0`.
    private static func signed(_ seconds: Double) -> String {
        let whole = Int64(seconds: seconds, rounding: .toNearestOrAwayFromZero)
        return whole < 0 ? "\(whole)" : "+\(whole)"
    }

    /// The state in `path` as pretty JSON: format and version, the scenario, the genesis (MAC
    /// secret, clock, start, keys with their private halves), the seeded streams' positions (the
    /// events', the faults' and `/auth/keys` orders'), and every kept event, the delivery events
    /// among them (from which a restart rebuilds the notification log).
    package static func export(path: String) throws(Failure) -> String {
        let (file, _) = try open(path)
        guard let stored = file.stored else { throw Failure(description: "state file \(path): empty (no mock has started on it)") }
        var archive = JSONObject()
        archive["format"] = .string(format)
        archive["version"] = .int(StateFile.schemaVersion)
        archive["scenario"] = (try? JSONParser.parse(file.scenarioJSON)) ?? .null
        archive["genesis"] = stored.genesis.stored
        archive["random"] = stored.random?.stored ?? .null
        archive["fault_random"] = stored.faultRandom?.stored ?? .null
        archive["jwks_order"] = stored.keyOrder?.stored ?? .null
        archive["events"] = .array(stored.events.map { recorded in
            var event = JSONObject()
            event["sequence"] = .int(Int64(clamping: recorded.sequence))
            event["at"] = .double(recorded.at)
            event["event"] = recorded.event.stored
            return .object(event)
        })
        archive["deliveries_forgotten"] = .int(Int64(clamping: stored.forgottenThrough))
        return JSONWriter.pretty(.object(archive))
    }

    /// Events decoded and written per transaction by `importing`.
    static let importChunk = 1000

    /// Makes the state file `path`, which must not exist, from an archive `export` wrote (or a
    /// person edited). Everything is checked before the file is made, and an error names the JSON
    /// path at fault: every field's type and range (`StoredRange`: no value the mock could not
    /// have written), and that the mock's own operations could have produced the state
    /// (`World.refusal(of:)`, replayed event by event). The document is read one
    /// member, one event, at a time (`JSONSlices`), twice — to check, then to write in chunks —
    /// so what it holds at once is the bytes, the replayed world and one chunk, never the whole
    /// tree. Returns how many events it holds.
    @discardableResult
    package static func importing(_ bytes: [UInt8], into path: String) throws(Failure) -> Int {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw Failure(description: "state file \(path) exists; remove it or name a new file (import never writes over a state)")
        }
        let document = try ImportDocument(bytes)
        let file: StateFile
        do {
            file = try StateFile(path: path, scenarioJSON: document.scenario.prettyJSON)
        } catch {
            throw Failure(description: "\(error)")
        }
        do {
            try file.writeGenesis(document.genesis)
            var batch = StateBatch()
            // An older archive's delivery events go into the one sequence as the events are written.
            var merge = RecordedDelivery.Merge(document.deliveries)
            for index in document.events.indices {
                batch.events += merge.place(try document.event(index))
                if batch.events.count >= Self.importChunk {
                    try file.write(batch)
                    batch = StateBatch()
                }
            }
            batch.events += merge.rest()
            batch.random = document.random
            batch.faultRandom = document.faultRandom
            batch.keyOrder = document.keyOrder
            try file.write(batch)
            if document.forgottenThrough > 0 { try file.setForgotten(through: document.forgottenThrough) }
            file.close()
        } catch {
            // Checked already: only the disk can fail here. Nothing half-made is left behind.
            file.close()
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            throw Failure(description: "state file \(path): \(error)")
        }
        return document.events.count
    }

    /// Opens `path` to read (holding its lock), with the scenario it belongs to.
    private static func open(_ path: String) throws(Failure) -> (StateFile, Scenario) {
        // The scenario is the file's own.
        let file: StateFile
        do {
            file = try StateFile(path: path, scenarioJSON: nil, readOnly: true)
        } catch {
            throw Failure(description: "\(error)")
        }
        do {
            return (file, try Scenario.load(json: Array(file.scenarioJSON.utf8)))
        } catch {
            throw Failure(description: "state file \(path): its scenario no longer loads:\n\(error)")
        }
    }
}
