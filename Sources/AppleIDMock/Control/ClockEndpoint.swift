import JOSE
import MiniHTTP

/// `GET /__mock/clock` and `POST /__mock/clock`: read and move the mock clock. Every lifetime
/// follows it: codes, access tokens, id_token times, client_secret checks, transfer windows,
/// the key rotation pattern.
///
/// POST takes any of `{"freeze": true|false, "set": "RFC 3339", "advance": seconds}`, applied in
/// that order (so `{"set": …, "freeze": true}` stops the clock exactly there; `freeze: false`
/// lets it run last). Answers the clock as GET does.
struct ClockEndpoint: Sendable {
    let domain: AppleIDDomain

    /// Largest move at once: a century.
    static let maxAdvance: Double = 100 * 366 * 86400

    /// `{"epoch": seconds, "frozen": bool, "now": RFC 3339, "offset": seconds from real time}`.
    func show(_ request: HTTPRequest) -> HTTPResponse {
        ControlResponse.json(.object(Self.json(domain)))
    }

    /// Moves the clock.
    func move(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.moveClock)
        let freeze = try body.optionalBool("freeze")
        var changes: [AppleIDDomain.ClockChange] = []
        if freeze == true { changes.append(.freeze(true)) }
        if let text = try body.optionalString("set", maxBytes: 64) {
            guard let instant = RFC3339.parse(text) else {
                throw ControlRequest.Failure(message: "expected an RFC 3339 time such as 2030-01-01T00:00:00Z", field: "set")
            }
            changes.append(.set(Double(instant)))
        }
        if let value = body.object["advance"], value != .null {
            let seconds: Double
            switch value {
            case .int(let number): seconds = Double(number)
            case .double(let number): seconds = number
            default: throw ControlRequest.Failure(message: "expected a number of seconds", field: "advance")
            }
            guard seconds.isFinite, abs(seconds) <= Self.maxAdvance else {
                throw ControlRequest.Failure(message: "expected a number of seconds within a century", field: "advance")
            }
            changes.append(.advance(seconds))
        }
        if freeze == false { changes.append(.freeze(false)) }
        guard !changes.isEmpty else { throw ControlRequest.Failure(message: "expected one of advance, set, freeze", field: nil) }
        do throws(MockClock.OutOfRange) {
            // Moving the clock may run the rotation pattern: the domain generates its keys off the pool.
            try await domain.moveClock(changes)
        } catch {
            // All changes or none: find the one that leaves the range, for the message's field.
            let field = changes.contains { change in
                guard case .set(let instant) = change else { return false }
                return instant < Double(MockClock.representable.lowerBound) || Double(MockClock.representable.upperBound) < instant
            } ? "set" : "advance"
            throw ControlRequest.Failure(message: MockClock.OutOfRange.message, field: field)
        }
        return ControlResponse.json(.object(Self.json(domain)))
    }

    /// The clock as JSON.
    static func json(_ domain: AppleIDDomain) -> JSONObject {
        let (now, offset, clock) = domain.clockReading
        let seconds = Int64(seconds: now)
        var answer = JSONObject()
        answer["now"] = .string(RFC3339.format(seconds))
        answer["epoch"] = .int(seconds)
        answer["frozen"] = .bool(clock.isFrozen)
        answer["offset"] = .int(Int64(seconds: offset, rounding: .toNearestOrAwayFromZero))
        return answer
    }
}
