import JOSE
import MiniHTTP

/// `/__mock/faults`: the faults acting on Apple's routes and on notification delivery.
/// `POST` installs one (the body is a fault, as in a scenario's `faults`) and answers it with
/// its id, 201; `GET` lists them (or one, by id) with how often each has fired; `DELETE`
/// removes one, or all.
struct FaultsEndpoint: Sendable {
    let faults: FaultBook

    func add(_ request: HTTPRequest) throws -> HTTPResponse {
        guard !request.body.isEmpty, let value = try? JSONParser.parse(request.body) else {
            throw ControlRequest.Failure(message: request.body.isEmpty ? "body is empty: expected a fault" : "body is not valid JSON", field: nil)
        }
        let spec: FaultSpec
        do {
            spec = try FaultSpec(json: value)
        } catch {
            throw ControlRequest.Failure(message: error.message, field: error.key)
        }
        do {
            return ControlResponse.json(.object(try faults.add(spec).json), status: HTTPStatus(201))
        } catch {
            throw ControlRequest.Failure(message: "at most \(FaultSpec.maxCount) faults are installed at once; DELETE some first", field: nil,
                                         status: HTTPStatus(409))
        }
    }

    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, known: [])
        return ControlResponse.json(.object(["faults": .array(faults.all.map { .object($0.json) })]))
    }

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let id = Self.id(request), let fault = faults.fault(id) else { throw Self.unknown(request) }
        return ControlResponse.json(.object(fault.json))
    }

    func remove(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let id = Self.id(request), let fault = faults.remove(id) else { throw Self.unknown(request) }
        return ControlResponse.json(.object(fault.json))
    }

    func removeAll(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, known: [])
        return ControlResponse.json(.object(["removed": .int(Int64(faults.removeAll()))]))
    }

    private static func id(_ request: HTTPRequest) -> String? {
        request.pathParameters["id"].flatMap(HTTPForm.percentDecode)
    }

    private static func unknown(_ request: HTTPRequest) -> ControlNotFound {
        ControlNotFound(message: "no fault \"\(LogText.clip(id(request) ?? ""))\" (GET /__mock/faults lists them)", field: "id")
    }
}
