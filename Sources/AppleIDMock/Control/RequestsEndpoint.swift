import JOSE
import MiniHTTP

/// `/__mock/requests`: the request journal (`RequestJournal`).
///
/// `GET [?method=&path=&client_id=&grant_type=&status=&control=&after=&limit=&wait=S]`: the kept
/// requests matching every filter given, oldest first (`{"requests": [...], "last": ID, "missed":
/// N, "newest": ID}`; `newest`, the id of the newest request kept whatever the filters, marks
/// "from here on" for a later `after`); a page ends early once its entries' kept records pass
/// 4 MiB (`last` says where the next begins); with `wait`, holds the request up to S seconds
/// (at most 60) until a matching one lands.
/// `GET /__mock/requests/count?…` answers `{"count": N}` (WireMock's `verify`: "exactly once").
/// `DELETE` forgets them all (`{"cleared": N}`). With the journal off (`serve --journal off`)
/// each answers 409.
struct RequestsEndpoint: Sendable {
    let journal: RequestJournal?

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let journal = try journalOn()
        let (filter, limit, wait) = try Self.parse(request, paging: true)
        let page = wait > 0
            ? await journal.awaitEntries(matching: filter, limit: limit, seconds: wait, byteLimit: RequestJournal.pageBytes)
            : journal.entries(matching: filter, limit: limit, byteLimit: RequestJournal.pageBytes)
        var answer = JSONObject()
        answer["requests"] = .array(page.entries.map { .object($0.json) })
        answer["last"] = .int(Int64(clamping: page.entries.last?.id ?? filter.after))
        answer["missed"] = .int(Int64(clamping: page.missed))
        answer["newest"] = .int(Int64(clamping: journal.lastID))
        return ControlResponse.json(.object(answer))
    }

    func count(_ request: HTTPRequest) throws -> HTTPResponse {
        let journal = try journalOn()
        let (filter, _, _) = try Self.parse(request, paging: false)
        return ControlResponse.json(.object(["count": .int(Int64(journal.count(matching: filter)))]))
    }

    func clear(_ request: HTTPRequest) throws -> HTTPResponse {
        let journal = try journalOn()
        guard request.query?.isEmpty ?? true else { throw ControlRequest.Failure(message: "DELETE takes no parameters", field: nil) }
        return ControlResponse.json(.object(["cleared": .int(Int64(journal.clear()))]))
    }

    private func journalOn() throws(ControlRequest.Failure) -> RequestJournal {
        guard let journal else { throw ControlRequest.Failure(message: "the request journal is off (serve --journal off)", field: nil, status: HTTPStatus(409)) }
        return journal
    }

    /// The filter, page size and wait of `request`'s query; every bad parameter names itself.
    static func parse(_ request: HTTPRequest, paging: Bool) throws(ControlRequest.Failure) -> (RequestFilter, Int, Double) {
        let query = try ControlRequest.query(request, for: paging ? ControlOperations.requestJournal : ControlOperations.countRequests)
        var filter = RequestFilter()
        var limit = RequestJournal.pageLimit
        var wait: Double = 0
        for (name, value) in query {
            if let problem = RequestFilter.problem(name, value) { throw ControlRequest.Failure(message: "expected \(problem)", field: name) }
            switch name {
            case "method": filter.method = HTTPMethod(rawValue: value)
            case "path": filter.path = value
            case "client_id": filter.clientID = value
            case "grant_type": filter.grantType = value
            case "status": filter.status = RequestFilter.StatusMatch(value)
            case "control": filter.control = value == "true"
            case "after":
                guard let number = UInt64(value) else { throw ControlRequest.Failure(message: "expected a request id (0 or more)", field: name) }
                filter.after = number
            case "limit" where paging:
                guard let number = Int(value), (1...RequestJournal.pageLimit).contains(number) else {
                    throw ControlRequest.Failure(message: "expected 1 to \(RequestJournal.pageLimit)", field: name)
                }
                limit = number
            case "wait" where paging:
                wait = try ControlRequest.waitSeconds(value)
            default: break
            }
        }
        return (filter, limit, wait)
    }
}
