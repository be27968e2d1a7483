import FoundationEssentials
import JOSE

/// `appleid-mock state show|export|import`: a state file looked at, saved as JSON a person can
/// read and edit, and made from such JSON to seed a suite. Every call holds the file's lock
/// while it runs, so none works on a file a running mock holds.
public enum StateArchive {
    /// What an archive's `format` says.
    static let format = "appleid-mock-state"

    /// Why an archive cannot be read or written; the CLI exits 2 with the message.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What is wrong, naming the JSON path at fault where there is one.
        public var description: String
    }

    /// A summary of the state in `path`: the scenario, clock, users, consents, codes, keys,
    /// events and notifications.
    public static func show(path: String) throws(Failure) -> String {
        let (file, scenario) = try open(path)
        guard let stored = file.stored else { throw Failure(description: "state file \(path): empty (no mock has started on it)") }
        var configuration = AppleIDMockConfiguration()
        configuration.scenario = scenario
        configuration.log = { _ in }
        let domain: AppleIDDomain
        do {
            domain = try AppleIDDomain(configuration: configuration, restoring: file)
        } catch {
            throw Failure(description: "\(error)")
        }
        let state = domain.state
        let users = state.users
        let keys = state.keys
        let clock = state.clock
        let records = stored.notifications.records
        let lines: [(String, String)] = [
            ("scenario", "\(scenario.teams.count) team\(scenario.teams.count == 1 ? "" : "s"), \(scenario.users.count) user\(scenario.users.count == 1 ? "" : "s")"),
            ("clock", RFC3339.format(state.now) + (clock.isFrozen ? " (frozen)" : " (running, \(Self.signed(state.offsetFromRealTime)) s from real time)")),
            ("users", "\(users.count) (\(users.filter(\.addedAtRuntime).count) added at runtime, \(users.filter(\.deleted).count) deleted)"),
            ("consents", "\(state.consentCount) live"),
            ("codes", "\(state.pendingCodeCount) pending"),
            ("keys", "\(keys.filter { $0.state != .retired }.count) published, \(keys.filter { $0.state == .retired }.count) retired; signing with \(state.signingKeyID ?? "none")"),
            ("events", "\(stored.events.count) kept, the last #\(state.lastEventSequence)"),
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
    /// events' and `/auth/keys` orders'), every kept event, and the notification log.
    public static func export(path: String) throws(Failure) -> String {
        let (file, _) = try open(path)
        guard let stored = file.stored else { throw Failure(description: "state file \(path): empty (no mock has started on it)") }
        var archive = JSONObject()
        archive["format"] = .string(format)
        archive["version"] = .int(StateFile.schemaVersion)
        archive["scenario"] = (try? JSONParser.parse(file.scenarioJSON)) ?? .null
        archive["genesis"] = stored.genesis.stored
        archive["random"] = stored.random?.stored ?? .null
        archive["jwks_order"] = stored.keyOrder?.stored ?? .null
        archive["events"] = .array(stored.events.map { recorded in
            var event = JSONObject()
            event["sequence"] = .int(Int64(clamping: recorded.sequence))
            event["at"] = .double(recorded.at)
            event["event"] = recorded.event.stored
            return .object(event)
        })
        var notifications = JSONObject()
        notifications["cursor"] = .int(Int64(clamping: stored.notifications.cursor))
        notifications["next_id"] = .int(Int64(clamping: stored.notifications.nextID))
        notifications["records"] = .array(stored.notifications.records.map(\.stored))
        archive["notifications"] = .object(notifications)
        return JSONWriter.pretty(.object(archive))
    }

    /// Makes the state file `path`, which must not exist, from an archive `export` wrote (or a
    /// person edited). Everything is checked before the file is made; an error names the JSON
    /// path at fault. Returns how many events it holds.
    @discardableResult
    public static func importing(_ bytes: [UInt8], into path: String) throws(Failure) -> Int {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw Failure(description: "state file \(path) exists; remove it or name a new file (import never writes over a state)")
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw Failure(description: "not JSON: \(error)")
        }
        guard case .object(let archive) = json else { throw Failure(description: "$: expected an object") }
        guard archive["format"] == .string(format) else { throw Failure(description: "format: expected \"\(format)\"") }
        guard case .int(let version)? = archive["version"], (1...StateFile.schemaVersion).contains(version) else {
            throw Failure(description: "version: expected 1 to \(StateFile.schemaVersion)")
        }
        guard let scenarioJSON = archive["scenario"], case .object = scenarioJSON else { throw Failure(description: "scenario: expected an object") }
        let scenario: Scenario
        do {
            scenario = try Scenario.load(json: JSONWriter.compact(scenarioJSON))
        } catch {
            throw Failure(description: "scenario: \(error)")
        }
        do {
            let genesis = try StateGenesis(stored: archive["genesis"] ?? .null, path: "genesis")
            var batch = StateBatch()
            if let random = archive["random"], random != .null { batch.random = try SeededRandom.Position(stored: random, path: "random") }
            if let order = archive["jwks_order"], order != .null { batch.keyOrder = try SeededRandom.Position(stored: order, path: "jwks_order") }
            guard case .array(let events)? = archive["events"] else { throw StoredStateError(path: "events", message: "expected an array") }
            var last: UInt64 = 0
            for (index, entry) in events.enumerated() {
                let place = "events[\(index)]"
                guard case .object(let object) = entry else { throw StoredStateError(path: place, message: "expected an object") }
                guard case .int(let sequence)? = object["sequence"], StoredRange.counters.contains(sequence) else {
                    throw StoredStateError(path: place + ".sequence", message: StoredRange.expectation(StoredRange.counters))
                }
                guard UInt64(sequence) > last else {
                    throw StoredStateError(path: place + ".sequence", message: "expected an integer above the previous event's (\(last))")
                }
                let at: Double
                switch object["at"] {
                case .double(let value)? where StoredRange.instants.contains(value): at = value
                case .int(let value)? where StoredRange.seconds.contains(value): at = Double(value)
                default: throw StoredStateError(path: place + ".at", message: StoredRange.expectation(StoredRange.instants, "a number of seconds"))
                }
                let event = try DomainEvent(stored: object["event"] ?? .null, path: place + ".event")
                batch.events.append(MockState.RecordedEvent(sequence: UInt64(sequence), at: at, event: event))
                last = UInt64(sequence)
            }
            guard case .object(let notifications)? = archive["notifications"] else {
                throw StoredStateError(path: "notifications", message: "expected an object")
            }
            guard case .int(let cursor)? = notifications["cursor"], StoredRange.counts.contains(cursor) else {
                throw StoredStateError(path: "notifications.cursor", message: StoredRange.expectation(StoredRange.counts))
            }
            guard case .int(let nextID)? = notifications["next_id"], StoredRange.counters.contains(nextID) else {
                throw StoredStateError(path: "notifications.next_id", message: StoredRange.expectation(StoredRange.counters))
            }
            guard case .array(let records)? = notifications["records"] else {
                throw StoredStateError(path: "notifications.records", message: "expected an array")
            }
            var changes = NotificationChanges(replaceAll: true, firstLiveID: 1, cursor: UInt64(cursor), nextID: UInt64(nextID))
            for (index, record) in records.enumerated() {
                changes.records.append(try NotificationRecord(stored: record, path: "notifications.records[\(index)]"))
            }
            batch.notifications = changes
            let file = try StateFile(path: path, scenarioJSON: scenario.prettyJSON)
            try file.writeGenesis(genesis)
            try file.write(batch)
            return batch.events.count
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "\(error)")
        }
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
