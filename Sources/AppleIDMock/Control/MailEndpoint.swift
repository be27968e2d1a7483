import JOSE
import MiniHTTP

/// `/__mock/mail`: what the SMTP port received, in Mailpit's shape. `GET /__mock/mail[?after=ID
/// &limit=N&wait=S]` lists messages after ID (oldest first, at most N, default 100, and no more
/// than 4 MiB of messages: page with `after`), holding
/// the request up to S seconds until one arrives; each has the envelope, the relay's verdict
/// on every recipient (forwarded with the real address, direct, or refused with the reason),
/// the header fields, subject, text and HTML. `GET /__mock/mail/ID` is one, `/raw` its bytes as
/// received; `DELETE /__mock/mail` forgets them all.
struct MailEndpoint: Sendable {
    let mailbox: MailBox?

    /// Most messages one answer lists.
    static let maxLimit = 1000
    /// Message bytes one list answer decodes at most (one message always): a long poll of a full
    /// mailbox stays a few MiB; the rest comes with `after`.
    static let maxAnswerBytes = 4 * 1024 * 1024

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        let query = try ControlRequest.query(request, for: ControlOperations.mailList)
        var after: UInt64 = 0
        var limit = 100
        var wait: Double = 0
        for (name, value) in query {
            switch name {
            case "after":
                guard let number = UInt64(value) else { throw ControlRequest.Failure(message: "expected a message id", field: "after") }
                after = number
            case "limit":
                guard let number = Int(value), (1...Self.maxLimit).contains(number) else {
                    throw ControlRequest.Failure(message: "expected 1 to \(Self.maxLimit)", field: "limit")
                }
                limit = number
            case "wait":
                wait = try ControlRequest.waitSeconds(value)
            default: break
            }
        }
        guard let mailbox else { return ControlResponse.json(.object(["messages": .array([])])) }
        let records = wait > 0 ? await mailbox.await(after: after, seconds: wait, limit: limit, maxBytes: Self.maxAnswerBytes)
            : mailbox.records(after: after, limit: limit, maxBytes: Self.maxAnswerBytes)
        return ControlResponse.json(.object(["messages": .array(records.map { .object($0.json) })]))
    }

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        ControlResponse.json(.object(try record(request).json))
    }

    func raw(_ request: HTTPRequest) throws -> HTTPResponse {
        let record = try record(request)
        guard let raw = record.raw else {
            throw ControlNotFound(message: "mail \(record.id) is a refused recipient: no message was taken", field: "id")
        }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "message/rfc822"], body: raw)
    }

    func clear(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, for: ControlOperations.clearMail)
        mailbox?.clear()
        return ControlResponse.json(.object(["messages": .array([])]))
    }

    private func record(_ request: HTTPRequest) throws -> MailRecord {
        let text = request.pathParameters["id"] ?? ""
        guard let id = UInt64(text), let record = mailbox?.record(id) else {
            throw ControlNotFound(message: "no mail \"\(LogText.clip(text))\" (GET /__mock/mail lists what is kept)", field: "id")
        }
        return record
    }
}

extension MailRecord {
    /// The record as the mailbox API shows it.
    var json: JSONObject {
        var object = JSONObject()
        object["id"] = .int(Int64(id))
        object["at"] = .string(RFC3339.format(at))
        object["helo"] = .string(heloName)
        object["tls"] = .bool(overTLS)
        object["from"] = .string(sender)
        object["recipients"] = .array(recipients.map { .object($0.json) })
        object["size"] = .int(Int64(raw?.count ?? 0))
        let content = raw.map(MailContent.init)
        object["subject"] = content?.subject.map(JSONValue.string) ?? .null
        object["headers"] = .array((content?.headers ?? []).map { .object(["name": .string($0.name), "value": .string($0.value)]) })
        object["text"] = content?.text.map(JSONValue.string) ?? .null
        object["html"] = content?.html.map(JSONValue.string) ?? .null
        object["forwarding"] = forwarding.map { forwarding in
            .object(["target": .string(forwarding.target), "outcome": .string(forwarding.outcome.rawValue),
                     "error": forwarding.error.map(JSONValue.string) ?? .null])
        } ?? .null
        return object
    }
}

extension MailRecord.Recipient {
    var json: JSONObject {
        var object = JSONObject()
        object["address"] = .string(address)
        switch verdict {
        case .forward(_, let real, let user, let team):
            object["verdict"] = "forwarded"
            object["real_address"] = .string(real)
            object["user"] = .string(user)
            object["team_id"] = .string(team)
            object["reason"] = .null
        case .direct:
            object["verdict"] = "direct"
            object["real_address"] = .null
            object["user"] = .null
            object["team_id"] = .null
            object["reason"] = .null
        case .refuse(_, _, let reason):
            object["verdict"] = "refused"
            object["real_address"] = .null
            object["user"] = .null
            object["team_id"] = .null
            object["reason"] = .string(reason)
        }
        object["reply"] = reply.map(JSONValue.string) ?? .null
        return object
    }
}
