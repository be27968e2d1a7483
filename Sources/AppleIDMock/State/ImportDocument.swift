import JOSE

/// A state archive (`state export`'s JSON) checked whole before `state import` makes a file of
/// it: its members cut out of the bytes (`JSONSlices`) and parsed one at a time; every event
/// decoded, range-checked and replayed through `World.refusal(of:)` on the state it leads to
/// (the scenario's initial state at the genesis, then each event applied), the delivery events
/// among them. An older archive's delivery events, in their own sequence, are checked against the
/// events and merged into them as they are written (a version 1 archive's notification log taken
/// over as `notification-imported` events). Only the bytes, the replayed world and those delivery
/// events stay in memory; `event(_:)` decodes an event again to write it.
struct ImportDocument {
    /// The members an archive has, in the order `export` writes them.
    static let keys = ["format", "version", "scenario", "genesis", "random", "fault_random", "jwks_order", "events", "deliveries",
                       "deliveries_forgotten", "notifications"]

    private let bytes: [UInt8]
    /// The scenario the state belongs to.
    let scenario: Scenario
    /// The mock's beginning.
    let genesis: StateGenesis
    /// The seeded streams' positions, when stored.
    let random: SeededRandom.Position?
    let faultRandom: SeededRandom.Position?
    let keyOrder: SeededRandom.Position?
    /// Where each event's object is in `bytes`.
    let events: [Range<Int>]
    /// A version 2 archive's delivery events, or a version 1 log's records as
    /// `notification-imported` events, to merge into the events (none from version 3 on).
    let deliveries: [RecordedDelivery]
    /// Notifications whose delivery events compaction dropped.
    let forgottenThrough: UInt64

    /// Reads and checks `bytes`; the first problem is a `Failure` naming its JSON path.
    init(_ bytes: [UInt8]) throws(StateArchive.Failure) {
        self.bytes = bytes
        var members: [String: Range<Int>] = [:]
        do {
            for (key, range) in try JSONSlices.members(bytes, in: try JSONSlices.document(bytes)) {
                guard Self.keys.contains(key) else { throw StateArchive.Failure(description: "\(key): unknown key") }
                members[key] = range
            }
        } catch let error as StateArchive.Failure {
            throw error
        } catch {
            throw StateArchive.Failure(description: "not JSON: \(error)")
        }
        /// The member `key` parsed (null when absent).
        func value(_ key: String) throws(StateArchive.Failure) -> JSONValue {
            guard let range = members[key] else { return .null }
            do {
                return try JSONSlices.parse(bytes, range)
            } catch {
                throw StateArchive.Failure(description: "\(key): not JSON: \(error)")
            }
        }
        guard try value("format") == .string(StateArchive.format) else { throw StateArchive.Failure(description: "format: expected \"\(StateArchive.format)\"") }
        guard case .int(let version) = try value("version"), (1...StateFile.schemaVersion).contains(version) else {
            throw StateArchive.Failure(description: "version: expected 1 to \(StateFile.schemaVersion)")
        }
        let scenarioJSON = try value("scenario")
        guard case .object = scenarioJSON else { throw StateArchive.Failure(description: "scenario: expected an object") }
        do {
            scenario = try Scenario.load(json: JSONWriter.compact(scenarioJSON))
        } catch {
            throw StateArchive.Failure(description: "scenario: \(error)")
        }
        let (genesisJSON, randomJSON, orderJSON) = (try value("genesis"), try value("random"), try value("jwks_order"))
        let faultJSON = try value("fault_random")
        do throws(StoredStateError) {
            genesis = try StateGenesis(stored: genesisJSON, path: "genesis")
            random = randomJSON == .null ? nil : try SeededRandom.Position(stored: randomJSON, path: "random")
            faultRandom = faultJSON == .null ? nil : try SeededRandom.Position(stored: faultJSON, path: "fault_random")
            keyOrder = orderJSON == .null ? nil : try SeededRandom.Position(stored: orderJSON, path: "jwks_order")
        } catch {
            throw StateArchive.Failure(description: "\(error)")
        }
        do {
            events = try JSONSlices.elements(bytes, in: members["events"] ?? 0..<0)
        } catch {
            throw StateArchive.Failure(description: members["events"] == nil ? "events: expected an array" : "events: \(error)")
        }
        var world = try Self.startingWorld(scenario: scenario, genesis: genesis)
        var last: UInt64 = 0
        for index in events.indices {
            let recorded = try Self.event(bytes, events[index], index: index, after: last)
            if let (field, message) = world.refusal(of: recorded.event) {
                throw StateArchive.Failure(description: "events[\(index)].event.\(field): \(message)")
            }
            world.apply(recorded.event)
            last = recorded.sequence
        }
        if version == 1 {
            guard members["deliveries"] == nil else { throw StateArchive.Failure(description: "deliveries: not a key of a version 1 archive") }
            let log = try Self.notifications(bytes, members["notifications"], lastSequence: last)
            deliveries = log.records.enumerated().map { RecordedDelivery(sequence: UInt64($0.offset + 1), cursor: log.cursor, event: .imported($0.element)) }
            forgottenThrough = 0
        } else {
            guard members["notifications"] == nil else {
                throw StateArchive.Failure(description: "notifications: not a key of a version \(version) archive (its log is its delivery events)")
            }
            if version >= 3 {
                guard members["deliveries"] == nil else {
                    throw StateArchive.Failure(description: "deliveries: not a key of a version \(version) archive (its delivery events are among its events)")
                }
                deliveries = []
            } else {
                deliveries = try Self.deliveries(bytes, members["deliveries"], lastSequence: last)
            }
            switch try value("deliveries_forgotten") {
            case .null: forgottenThrough = 0
            case .int(let through) where StoredRange.counts.contains(through): forgottenThrough = UInt64(through)
            default: throw StateArchive.Failure(description: "deliveries_forgotten: \(StoredRange.expectation(StoredRange.counts))")
            }
        }
    }

    /// The delivery events at `range`: sequences ascending, each cursor at most the last event's
    /// sequence and never below the previous one's, each event decoded.
    private static func deliveries(_ bytes: [UInt8], _ range: Range<Int>?, lastSequence: UInt64) throws(StateArchive.Failure) -> [RecordedDelivery] {
        let elements: [Range<Int>]
        do {
            elements = try JSONSlices.elements(bytes, in: range ?? 0..<0)
        } catch {
            throw StateArchive.Failure(description: range == nil ? "deliveries: expected an array" : "deliveries: \(error)")
        }
        var found: [RecordedDelivery] = []
        found.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let place = "deliveries[\(index)]"
            do throws(StoredStateError) {
                let json: JSONValue
                do {
                    json = try JSONSlices.parse(bytes, element)
                } catch {
                    throw StoredStateError(path: place, message: "not JSON: \(error)")
                }
                var reader = try StoredReader(json, path: place)
                let sequence = UInt64(try reader.int64("sequence", in: StoredRange.counters))
                guard sequence > found.last?.sequence ?? 0 else { throw reader.error("sequence", "expected an integer above the previous delivery's") }
                let cursor = UInt64(try reader.int64("cursor", in: StoredRange.counts))
                guard cursor <= lastSequence, cursor >= found.last?.cursor ?? 0 else {
                    throw reader.error("cursor", "expected at most the last event's sequence (\(lastSequence)) and at least the previous delivery's cursor")
                }
                let event = try reader.decode("event", as: DeliveryEvent.self)
                try reader.finish()
                found.append(RecordedDelivery(sequence: sequence, cursor: cursor, event: event))
            } catch {
                throw StateArchive.Failure(description: "\(error)")
            }
        }
        return found
    }

    /// Event `index` decoded again (it was checked when the document was read).
    func event(_ index: Int) throws(StateArchive.Failure) -> RecordedEvent {
        try Self.event(bytes, events[index], index: index, after: 0)
    }

    // MARK: - Reading

    /// The scenario's initial state at the genesis, as a mock restoring the file begins.
    private static func startingWorld(scenario: Scenario, genesis: StateGenesis) throws(StateArchive.Failure) -> World {
        let clients: ClientDirectory
        let ring: KeyRing
        do {
            clients = try ClientDirectory(scenario: scenario)
            ring = try KeyRing(keys: genesis.keys, activeKeyID: genesis.activeKeyID)
        } catch {
            throw StateArchive.Failure(description: "genesis: \(error)")
        }
        let context = DomainContext(scenario: scenario, clients: clients, issuer: AppleIDMockConfiguration().issuer, ring: ring, keySeed: nil,
                                    codeCapacity: AppleIDMockConfiguration().maxPendingCodes)
        return World(context: context, clock: genesis.clock, now: genesis.start, secret: genesis.secret, firstConsentID: 1, random: .seeded(0),
                     faultRandom: SeededRandom(entropy: [UInt8](repeating: 0, count: 32)))
    }

    /// The event at `range`, the `index`th: its sequence above `after` and within
    /// `StoredRange.counters`, its time within `StoredRange.instants`, the event decoded.
    private static func event(_ bytes: [UInt8], _ range: Range<Int>, index: Int, after last: UInt64) throws(StateArchive.Failure) -> RecordedEvent {
        let place = "events[\(index)]"
        let json: JSONValue
        do {
            json = try JSONSlices.parse(bytes, range)
        } catch {
            throw StateArchive.Failure(description: "\(place): not JSON: \(error)")
        }
        do throws(StoredStateError) {
            var reader = try StoredReader(json, path: place)
            let sequence = try reader.int64("sequence", in: StoredRange.counters)
            guard UInt64(sequence) > last else { throw reader.error("sequence", "expected an integer above the previous event's (\(last))") }
            let at = try reader.double("at", in: StoredRange.instants)
            let event = try reader.decode("event", as: DomainEvent.self)
            try reader.finish()
            return RecordedEvent(sequence: UInt64(sequence), at: at, event: event)
        } catch {
            throw StateArchive.Failure(description: "\(error)")
        }
    }

    /// The notification log at `range`: at most `NotificationDeliverer.logCapacity` records,
    /// ids ascending below `next_id`, none about an event after the last one, and the cursor
    /// not past it either (the deliverer would wait for events that never come).
    private static func notifications(_ bytes: [UInt8], _ range: Range<Int>?, lastSequence: UInt64) throws(StateArchive.Failure)
        -> (cursor: UInt64, records: [NotificationRecord]) {
        guard let range else { throw StateArchive.Failure(description: "notifications: expected an object") }
        do throws(StoredStateError) {
            var members: [String: Range<Int>] = [:]
            do {
                for (key, value) in try JSONSlices.members(bytes, in: range) { members[key] = value }
            } catch {
                throw StoredStateError(path: "notifications", message: "expected an object (\(error))")
            }
            func parsed(_ key: String) throws(StoredStateError) -> JSONValue {
                guard let value = members[key] else { throw StoredStateError(path: "notifications.\(key)", message: "missing required key") }
                do {
                    return try JSONSlices.parse(bytes, value)
                } catch {
                    throw StoredStateError(path: "notifications.\(key)", message: "not JSON: \(error)")
                }
            }
            if let unknown = members.keys.sorted().first(where: { !["cursor", "next_id", "records"].contains($0) }) {
                throw StoredStateError(path: "notifications.\(unknown)", message: "unknown key")
            }
            guard case .int(let cursor) = try parsed("cursor"), (0...Int64(clamping: lastSequence)).contains(cursor) else {
                throw StoredStateError(path: "notifications.cursor", message: "expected an integer from 0 to the last event's sequence (\(lastSequence))")
            }
            guard case .int(let nextID) = try parsed("next_id"), StoredRange.counters.contains(nextID) else {
                throw StoredStateError(path: "notifications.next_id", message: StoredRange.expectation(StoredRange.counters))
            }
            let elements: [Range<Int>]
            do {
                elements = try JSONSlices.elements(bytes, in: members["records"] ?? 0..<0)
            } catch {
                throw StoredStateError(path: "notifications.records", message: "expected an array")
            }
            guard elements.count <= NotificationDeliverer.logCapacity else {
                throw StoredStateError(path: "notifications.records", message: "expected at most \(NotificationDeliverer.logCapacity) records, "
                                       + "the most the log keeps; found \(elements.count)")
            }
            var records: [NotificationRecord] = []
            var lastID: UInt64 = 0
            for (index, element) in elements.enumerated() {
                let place = "notifications.records[\(index)]"
                let json: JSONValue
                do {
                    json = try JSONSlices.parse(bytes, element)
                } catch {
                    throw StoredStateError(path: place, message: "not JSON: \(error)")
                }
                let record = try NotificationRecord(stored: json, path: place)
                guard record.id > lastID, record.id < UInt64(nextID) else {
                    throw StoredStateError(path: place + ".id", message: "expected an id above the previous record's (\(lastID)) and below next_id (\(nextID))")
                }
                guard record.sequence <= lastSequence else {
                    throw StoredStateError(path: place + ".sequence", message: "expected at most the last event's sequence (\(lastSequence))")
                }
                lastID = record.id
                records.append(record)
            }
            return (UInt64(cursor), records)
        } catch {
            throw StateArchive.Failure(description: "\(error)")
        }
    }
}
