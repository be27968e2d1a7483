import JOSE
import MiniHTTP

/// The faults installed in the domain, in front of Apple's routes: when one fires for a request,
/// it answers in the handler's place (`respond`, `close`, `reset`: the handler never sees the
/// request) or changes how the handler's own answer is delivered (`delay`, `truncate`, `stall`,
/// `omit_signing_key`). The answer's journal note names the fault and its `fault-fired` event.
struct FaultGate: Sendable {
    let domain: AppleIDDomain

    /// A fault that fired: what to do.
    struct Firing: Sendable {
        let id: String
        let spec: FaultSpec
        /// The `fault-fired` event's sequence number.
        let event: UInt64?
    }

    /// `handler` behind the faults.
    func gate(_ handler: HTTPHandler) -> HTTPHandler {
        switch handler {
        case .immediate(let body):
            return .immediate { [self] request in
                guard let firing = fire(for: request) else { return try body(request) }
                return apply(firing, answer: Self.answered(firing) ? nil : try Self.outcome { try body(request) })
            }
        case .deferred(let body):
            return .deferred { [self] request in
                guard let firing = fire(for: request) else { return try await body(request) }
                var outcome: HTTPResponse?
                if !Self.answered(firing) {
                    // The handler's answer waits for the commit, the firing's event included.
                    do {
                        outcome = try await body(request)
                    } catch let known as HTTPResponseError {
                        outcome = known.response
                    }
                } else {
                    // The fault's own answer goes once its firing is committed: after kill -9, a
                    // fault that fires `times` times never fires once more.
                    do throws(CommitFailure) {
                        try await domain.events.barrier.settle()
                    } catch {
                        return RequestLog.appleUnavailable(request.path, error)
                    }
                }
                return apply(firing, answer: outcome)
            }
        }
    }

    /// Whether the fault answers by itself, without the handler.
    private static func answered(_ firing: Firing) -> Bool {
        switch firing.spec.action {
        case .respond, .close, .reset: true
        default: false
        }
    }

    /// The handler's answer, its known errors included (they are delivered as the fault says too).
    private static func outcome(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        do {
            return try body()
        } catch let known as HTTPResponseError {
            return known.response
        }
    }

    /// The response the fault makes of the handler's `answer` (nil when the handler did not run).
    private func apply(_ firing: Firing, answer: HTTPResponse?) -> HTTPResponse {
        var response = answer ?? HTTPResponse()
        var cut: HTTPDelivery.Cut?
        switch firing.spec.action {
        case .respond(let status, let headers, let body):
            response = HTTPResponse(status: HTTPStatus(status), body: Array(body.utf8))
            for (name, value) in headers { response.headers.add(name, value) }
        case .omitSigningKey:
            if let kid = signingKeyID { response.body = Self.keySet(response.body, without: kid) }
        case .close: cut = .close
        case .reset: cut = .reset
        case .truncate(let count): cut = .truncate(bodyBytes: count)
        case .stall(let count): cut = .stall(bodyBytes: count)
        case .delay, .drop, .duplicate, .reorder, .once: break
        }
        response.delivery = HTTPDelivery(delayMilliseconds: firing.spec.delayMilliseconds, cut: cut)
        var note = answer?.note as? JournalNote ?? JournalNote()
        note.fault = "\(firing.id) \(firing.spec.action.name)"
        if let event = firing.event { note.events.insert(event, at: 0) }
        response.note = note
        return response
    }

    /// The fault that fires for `request`, if one does (recorded as a `fault-fired` event).
    /// `client_id` and `grant_type` are read from the form (POST) or the query (GET), and only
    /// when a fault is installed.
    private func fire(for request: HTTPRequest) -> Firing? {
        let fired = domain.fireRequestFault(method: request.method.rawValue, path: request.path) {
            let bytes = request.method == .post ? request.body : Array((request.query ?? "").utf8)
            let form = (try? HTTPForm(decoding: bytes)) ?? HTTPForm()
            return (form["client_id"] ?? "", form["grant_type"] ?? "")
        }
        return fired.map { Firing(id: $0.fault.id, spec: $0.fault.spec, event: $0.event) }
    }

    /// The kid that signs now (what `omit_signing_key` leaves out of `/auth/keys`).
    private var signingKeyID: String? { domain.signingKey?.keyID }

    /// A `{"keys":[…]}` body without the JWK whose `kid` is `kid`, every other byte as it was
    /// written (each JWK's fields in Apple's order); anything else unchanged.
    static func keySet(_ body: [UInt8], without kid: String) -> [UInt8] {
        guard case .object(var set)? = try? JSONParser.parse(body), case .array(let keys)? = set["keys"] else { return body }
        set["keys"] = .array(keys.filter { $0.objectValue?["kid"] != .string(kid) })
        return JSONWriter.compact(.object(set))
    }
}
