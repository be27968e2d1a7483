import JOSE
import MiniHTTP

/// `/__mock/faults`: the faults acting on Apple's routes and on notification delivery.
/// `POST` installs one (the body is a fault, as in a scenario's `faults`) and answers it with
/// its id, 201, or an incident's (`{"incident": name, "minutes": n}`) and answers them all;
/// `GET` lists them (or one, by id) with how often each has fired; `DELETE` removes one, all,
/// or an incident's (`?incident=NAME`).
struct FaultsEndpoint: Sendable {
    let domain: AppleIDDomain

    func add(_ request: HTTPRequest) throws -> HTTPResponse {
        guard !request.body.isEmpty, let value = try? JSONParser.parse(request.body) else {
            throw ControlRequest.Failure(message: request.body.isEmpty ? "body is empty: expected a fault or an incident" : "body is not valid JSON",
                                         field: nil)
        }
        let specs: [FaultSpec]
        do {
            specs = try FaultIncident.entries(json: value)
        } catch {
            throw ControlRequest.Failure(message: error.message, field: error.key)
        }
        let installed = try domain.installFaults(specs)
        // An incident answers with every fault it installed; a fault with itself.
        guard case .object(let object) = value, case .string(let incident)? = object["incident"], object["action"] == nil else {
            return ControlResponse.json(.object(installed[0].json), status: HTTPStatus(201))
        }
        return ControlResponse.json(.object(["incident": .string(incident), "faults": .array(installed.map { .object($0.json) })]),
                                    status: HTTPStatus(201))
    }

    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, for: ControlOperations.listFaults)
        return ControlResponse.json(.object(["faults": .array(domain.faults.map { .object($0.json) })]))
    }

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let id = Self.id(request), let fault = domain.faults.first(where: { $0.id == id }) else { throw Self.unknown(request) }
        return ControlResponse.json(.object(fault.json))
    }

    func remove(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let id = Self.id(request), let fault = try? domain.removeFault(id) else { throw Self.unknown(request) }
        return ControlResponse.json(.object(fault.json))
    }

    /// Every fault, or with `?incident=NAME` every fault that incident installed.
    func removeAll(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, for: ControlOperations.removeFaults)
        let query = try ControlRequest.query(request, for: ControlOperations.removeFaults)
        var incident: FaultIncident?
        for (_, value) in query {
            guard let known = FaultIncident(rawValue: value) else {
                throw ControlRequest.Failure(message: "expected one of \(FaultIncident.allCases.map(\.rawValue).joined(separator: ", "))", field: "incident")
            }
            incident = known
        }
        return ControlResponse.json(.object(["removed": .int(Int64(domain.removeFaults(incident: incident)))]))
    }

    private static func id(_ request: HTTPRequest) -> String? {
        request.pathParameters["id"].flatMap(HTTPForm.percentDecode)
    }

    private static func unknown(_ request: HTTPRequest) -> ControlNotFound {
        ControlNotFound(message: "no fault \"\(LogText.clip(id(request) ?? ""))\" (GET /__mock/faults lists them)", field: "id")
    }
}
