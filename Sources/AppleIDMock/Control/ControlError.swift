import JOSE
import MiniHTTP

/// A refusal of the control API, said once for both of its doors: the JSON answer a route gives
/// (`{"error", "field", …}` with its status) and the `MockControlError` a Swift test catches are
/// made from the same message and field.
struct ControlError: Sendable {
    let status: HTTPStatus
    let message: String
    /// The input at fault, if one is.
    let field: String?
    /// Members the JSON answer carries besides `error` and `field` (a key refusal's `kid`).
    var extra = JSONObject()
}

/// An error the control API answers as a `ControlError`.
protocol ControlErrorConvertible: HTTPResponseError {
    var controlError: ControlError { get }
}

extension ControlErrorConvertible {
    package var response: HTTPResponse {
        let error = controlError
        return ControlResponse.error(error.message, field: error.field, status: error.status, extra: error.extra)
    }
}

extension MockControlError {
    /// The refusal as the control API names it.
    init(_ error: some ControlErrorConvertible) {
        let refusal = error.controlError
        self.init(field: refusal.field, message: refusal.message)
    }
}

extension KeyOperationError: ControlErrorConvertible {
    /// 404 for an unknown kid, 409 for a conflict, 500 when no key could be made; the body names
    /// the kid.
    var controlError: ControlError {
        let status: HTTPStatus = switch self {
        case .unknown: .notFound
        case .generationFailed: .internalServerError
        case .duplicate, .retiringActive, .retired, .tooMany, .keySequenceMoved: HTTPStatus(409)
        }
        var extra = JSONObject()
        extra["kid"] = .string(keyID)
        if case .tooMany(_, let limit) = self { extra["limit"] = .int(Int64(limit)) }
        return ControlError(status: status, message: message, field: "kid", extra: extra)
    }
}

extension AccountEventError: ControlErrorConvertible {
    /// 400 for bad input, 404 for an unknown user or client, 409 for what the current state does
    /// not allow.
    var controlError: ControlError {
        let status: HTTPStatus = switch kind {
        case .invalid: .badRequest
        case .unknown: .notFound
        case .notPossible: HTTPStatus(409)
        }
        return ControlError(status: status, message: message, field: field)
    }
}

extension UserOperationError: ControlErrorConvertible {
    /// 409 for a duplicate id, 503 when the mock holds as many users as it will.
    var controlError: ControlError {
        switch self {
        case .duplicate(let id): ControlError(status: HTTPStatus(409), message: "a user with id \"\(id)\" exists already", field: "id")
        case .full(let limit): ControlError(status: .serviceUnavailable, message: "the mock holds \(limit) users", field: nil)
        }
    }
}

extension AppleIDDomain.SignInRefusal: ControlErrorConvertible {
    /// 400 for a request at fault; 503 when the mock is full; 500 when it could not sign.
    var controlError: ControlError {
        switch self {
        case .invalid(let field, let message): ControlError(status: .badRequest, message: message, field: field)
        case .full(let full): full.controlError
        case .signing(let reason): ControlError(status: .internalServerError, message: "the token could not be signed: \(reason)", field: nil)
        }
    }
}

extension CapacityError: ControlErrorConvertible {
    /// 503: the mock is full, the request was fine.
    var controlError: ControlError { ControlError(status: .serviceUnavailable, message: message, field: nil) }
}

extension ControlInputError: ControlErrorConvertible {
    /// 400, naming the field.
    var controlError: ControlError { ControlError(status: .badRequest, message: message, field: field) }
}

extension FaultTableFull: ControlErrorConvertible {
    /// 409: the table holds as many faults as it will.
    var controlError: ControlError {
        ControlError(status: HTTPStatus(409), message: "at most \(FaultSpec.maxCount) faults are installed at once; DELETE some first", field: nil)
    }
}

extension MockClock.OutOfRange {
    /// What a move the clock cannot make is told, whichever door it came through.
    static var message: String { "the clock stays within 1970-01-01T00:00:00Z and \(RFC3339.format(MockClock.representable.upperBound))" }
}
