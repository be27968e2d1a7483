/// The refusals many control routes give alike: `components/responses` of the contract.
enum ControlRefusals {
    static let badRequest = ControlRefusal(name: "ControlBadRequest", shape: .json("Bad input: the message and the field at fault.", .ref("ControlError"), examples: #"{"unknownField": {"value": {"error": "unknown field (expected one of: advance, set, freeze)", "field": "speed"}}, "notJSON": {"value": {"error": "body is not valid JSON", "field": null}}}"#))
    static let unauthorized = ControlRefusal(name: "ControlUnauthorized", shape: .json("The mock runs with `--control-token` and the request lacks `Authorization: Bearer <token>`.", .ref("ControlError"), examples: #"{"noToken": {"value": {"error": "the control API needs Authorization: Bearer <the --control-token the mock was started with>", "field": "Authorization"}}}"#, headers: #"{"WWW-Authenticate": {"required": true, "schema": {"type": "string", "const": "Bearer realm=\"appleid-mock\""}}}"#))
    static let forbidden = ControlRefusal(name: "ControlForbidden", shape: .json("Refused by the control guard: a `Host` that is neither an IP literal, `localhost` nor an allowed name (`--allowed-host`), or a cross-origin `Origin`.", .ref("ControlError"), examples: #"{"rebinding": {"value": {"error": "Host \"evil.example\" is not allowed for the control API (allow a name with --allowed-host)", "field": "Host"}}}"#))
    static let unsupportedMediaType = ControlRefusal(name: "ControlUnsupportedMediaType", shape: .json("A body that is not `application/json`.", .ref("ControlError"), examples: #"{"form": {"value": {"error": "expected Content-Type: application/json", "field": "Content-Type"}}}"#))
    static let notFound = ControlRefusal(name: "ControlNotFound", shape: .json("What the request names does not exist.", .ref("ControlError"), examples: #"{"unknownClient": {"value": {"error": "no client \"com.nope\" in the scenario", "field": "client_id"}}}"#))
    static let conflict = ControlRefusal(name: "ControlConflict", shape: .json("What the mock's current state does not allow.", .ref("ControlError"), examples: #"{"noConsent": {"value": {"error": "alice has not signed in to com.example.web", "field": "user"}}}"#))
    static let unavailable = ControlRefusal(name: "ControlUnavailable", shape: .json("The mock is full (a bound of the mock: users, unredeemed codes) or its clock is beyond what tokens can carry.", .ref("ControlError"), examples: #"{"full": {"value": {"error": "the mock clock is beyond what tokens can carry", "field": null}}}"#))
    static let keyConflict = ControlRefusal(name: "KeyConflict", shape: .json("The key operation conflicts with the keys' state (a duplicate kid, the signing key, a retired key, `max_published` reached, or concurrent key operations under `--seed`).", .ref("KeyError"), examples: #"{"signing": {"value": {"error": "the key signs new tokens: activate another key before retiring it", "field": "kid", "kid": "W2ek7HdPaL"}}}"#))

    /// Every shared refusal, in the contract's order.
    static let all: [ControlRefusal] = [badRequest, unauthorized, forbidden, unsupportedMediaType, notFound, conflict, unavailable, keyConflict]
}

extension ControlRefusal {
    static var badRequest: ControlRefusal { ControlRefusals.badRequest }
    static var unauthorized: ControlRefusal { ControlRefusals.unauthorized }
    static var forbidden: ControlRefusal { ControlRefusals.forbidden }
    static var unsupportedMediaType: ControlRefusal { ControlRefusals.unsupportedMediaType }
    static var notFound: ControlRefusal { ControlRefusals.notFound }
    static var conflict: ControlRefusal { ControlRefusals.conflict }
    static var unavailable: ControlRefusal { ControlRefusals.unavailable }
    static var keyConflict: ControlRefusal { ControlRefusals.keyConflict }
}
