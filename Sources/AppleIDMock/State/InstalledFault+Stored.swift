import JOSE

extension InstalledFault: StoredCodable {
    /// `{"id", "fault": <the fault as a scenario writes it>, "remaining" | null, "fired", "until" | null}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["fault"] = .object(spec.json)
        object["remaining"] = remaining.map { .int(Int64($0)) } ?? .null
        object["fired"] = .int(Int64(fired))
        object["until"] = until.map(JSONValue.int) ?? .null
        return .object(object)
    }

    /// Reads `stored`: the fault as a scenario's is read, its counts within what the mock writes.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let id = try reader.string("id") { $0.hasPrefix("f") && Int($0.dropFirst()).map { $0 >= 1 } == true ? nil : "expected a fault id (f1, f2, …)" }
        let spec: FaultSpec
        do {
            spec = try FaultSpec(json: try reader.value("fault"))
        } catch let problem as FaultSpec.Problem {
            throw StoredStateError(path: reader.path(of: "fault") + (problem.key.map { ".\($0)" } ?? ""), message: problem.message)
        } catch let error as StoredStateError {
            throw error
        } catch {
            throw reader.error("fault", "\(error)")
        }
        self.init(id: id, spec: spec, remaining: try reader.optionalInt("remaining", in: 0...FaultSpec.maxTimes),
                  fired: try reader.int("fired", in: 0...Int(StoredRange.counts.upperBound)),
                  until: try reader.optionalInt64("until", in: StoredRange.seconds))
        try reader.finish()
    }
}
