import JOSE

extension Compatibility {
    /// One knob as a scenario spells it: its JSON name, how it is read (checked, with the path
    /// named on a bad value) and how it is written back. `Compatibility.knobs` lists each once,
    /// in the order `scenario print` writes them: a new knob is its field above and one line there.
    struct Knob: Sendable {
        /// The key in the scenario's `compatibility` object.
        let name: String
        /// Reads the knob from `object` at `path` into the knobs, reporting a bad value.
        let read: @Sendable (inout Compatibility, JSONObject, String, ScenarioReader) -> Void
        /// The knob's value as the scenario writes it.
        let write: @Sendable (Compatibility) -> JSONValue

        /// `true` or `false`.
        static func bool(_ name: String, _ field: WritableKeyPath<Compatibility, Bool> & Sendable) -> Knob {
            Knob(name: name, read: { knobs, object, path, reader in
                knobs[keyPath: field] = reader.bool(object, name, at: path, default: knobs[keyPath: field])
            }, write: { .bool($0[keyPath: field]) })
        }

        /// One of an enumeration's raw values.
        static func choice<E: RawRepresentable & CaseIterable & Sendable>(_ name: String, _ field: WritableKeyPath<Compatibility, E> & Sendable) -> Knob
        where E.RawValue == String {
            Knob(name: name, read: { knobs, object, path, reader in
                knobs[keyPath: field] = reader.choice(object, name, at: path, default: knobs[keyPath: field])
            }, write: { .string($0[keyPath: field].rawValue) })
        }

        /// One of `allowed` strings.
        static func string(_ name: String, _ field: WritableKeyPath<Compatibility, String> & Sendable, allowed: [String]) -> Knob {
            let expected = "expected " + allowed.map { "\"\($0)\"" }.joined(separator: " or ")
            return Knob(name: name, read: { knobs, object, path, reader in
                knobs[keyPath: field] = reader.string(object, name, at: path, default: knobs[keyPath: field]) { allowed.contains($0) ? nil : expected }
            }, write: { .string($0[keyPath: field]) })
        }

        /// An integer in `range`.
        static func int(_ name: String, _ field: WritableKeyPath<Compatibility, Int> & Sendable, range: ClosedRange<Int>) -> Knob {
            Knob(name: name, read: { knobs, object, path, reader in
                knobs[keyPath: field] = reader.int(object, name, at: path, default: knobs[keyPath: field], range: range)
            }, write: { .int(Int64($0[keyPath: field])) })
        }
    }

    /// Every knob, once, in the order they are written.
    static let knobs: [Knob] = [
        .choice("email_verified", \.emailVerified),
        .choice("is_private_email", \.isPrivateEmail),
        .choice("relay_domain", \.relayDomain),
        .string("default_response_mode", \.defaultResponseMode, allowed: ["query", "fragment", "form_post"]),
        .bool("refresh_returns_id_token", \.refreshReturnsIDToken),
        .bool("refresh_returns_refresh_token", \.refreshReturnsRefreshToken),
        .string("revoked_consent_refresh_error", \.revokedConsentRefreshError, allowed: ["invalid_request", "invalid_grant"]),
        Knob(name: "refresh_throttle", read: { knobs, object, path, reader in
            guard let value = object["refresh_throttle"], value != .null else { return }
            let here = ScenarioReader.child(path, "refresh_throttle")
            guard case .object = value else {
                return reader.report(here, "expected null or an object {\"per_day\": N, \"error\": \"invalid_grant\"}, found \(ScenarioReader.kind(value))")
            }
            guard let throttle = reader.object(value, at: here, known: ["per_day", "error"]) else { return }
            guard throttle["per_day"] != nil else { return reader.report(ScenarioReader.child(here, "per_day"), "missing required key") }
            let perDay = reader.int(throttle, "per_day", at: here, default: 1, range: 1...RefreshThrottle.maxPerDay)
            let expected = "expected " + RefreshThrottle.errors.map { "\"\($0)\"" }.joined(separator: " or ")
            let error = reader.string(throttle, "error", at: here, default: "invalid_grant") { RefreshThrottle.errors.contains($0) ? nil : expected }
            knobs.refreshThrottle = RefreshThrottle(perDay: perDay, error: error)
        }, write: { knobs in
            knobs.refreshThrottle.map { .object(["per_day": .int(Int64($0.perDay)), "error": .string($0.error)]) } ?? .null
        }),
        .bool("pkce_plain_allowed", \.pkcePlainAllowed),
        .int("client_secret_iat_leeway", \.clientSecretIATLeeway, range: 0...3600),
        .choice("client_secret_clock", \.clientSecretClock),
        .choice("client_secret_aud_array", \.clientSecretAudArray),
        .bool("email_on_later_logins", \.emailOnLaterLogins),
        .bool("shuffle_keys", \.shuffleKeys),
        .choice("authorize_error_format", \.authorizeErrorFormat),
        Knob(name: "authorize_error_status", read: { knobs, object, path, reader in
            knobs.authorizeErrorStatus = reader.int(object, "authorize_error_status", at: path, default: knobs.authorizeErrorStatus, range: 200...599)
            if [204, 205, 304].contains(knobs.authorizeErrorStatus) {
                // The error page has a body; these statuses cannot carry one (RFC 9110 §15.3.5, §15.3.6, §15.4.5).
                reader.report(ScenarioReader.child(path, "authorize_error_status"), "expected a status that carries a body (not 204, 205 or 304)")
                knobs.authorizeErrorStatus = Compatibility().authorizeErrorStatus
            }
        }, write: { .int(Int64($0.authorizeErrorStatus)) }),
        .bool("strict_redirect_uris", \.strictRedirectURIs),
        .string("account_deletion_event_type", \.accountDeletionEventType, allowed: ["account-delete", "account-deleted"]),
        .choice("event_time_unit", \.eventTimeUnit),
        .bool("revoke_notifies", \.revokeNotifies),
        .bool("revoke_requires_token", \.revokeRequiresToken),
        Knob(name: "token_json_body_error", read: { knobs, object, path, reader in
            // `token_content_type_error` is the knob's former name (until 0.2.0), still read.
            let former = "token_content_type_error"
            if object[former] != nil && object["token_json_body_error"] != nil {
                reader.report(ScenarioReader.child(path, former), "expected only one of token_json_body_error and its former name \(former)")
            }
            let key = object[former] != nil && object["token_json_body_error"] == nil ? former : "token_json_body_error"
            knobs.tokenJSONBodyError = reader.string(object, key, at: path, default: knobs.tokenJSONBodyError) {
                ["invalid_request", "invalid_client"].contains($0) ? nil : "expected \"invalid_request\" or \"invalid_client\""
            }
        }, write: { .string($0.tokenJSONBodyError) }),
        Knob(name: "jwks_cache_control", read: { knobs, object, path, reader in
            guard let value = object["jwks_cache_control"] else { return }
            knobs.jwksCacheControl = value == .null ? nil : reader.optionalString(object, "jwks_cache_control", at: path) { text in
                !text.isEmpty && text.utf8.count <= 200 && text.utf8.allSatisfy({ $0 >= 32 && $0 < 127 })
                    ? nil : "expected a header value (1 to 200 printable characters) or null"
            }
        }, write: { $0.jwksCacheControl.map(JSONValue.string) ?? .null }),
        .choice("events_claim_format", \.eventsClaimFormat),
        Knob(name: "notification_retry_delays", read: { knobs, object, path, reader in
            guard let value = object["notification_retry_delays"] else { return }
            if case .array(let items) = value, items.count <= 10,
               case let delays = items.compactMap({ item -> Int? in if case .int(let n) = item, (0...3600).contains(n) { Int(n) } else { nil } }),
               delays.count == items.count {
                knobs.notificationRetryDelays = delays
            } else {
                reader.report(ScenarioReader.child(path, "notification_retry_delays"), "expected an array of at most 10 delays in seconds, each from 0 to 3600")
            }
        }, write: { .array($0.notificationRetryDelays.map { .int(Int64($0)) }) }),
        Knob(name: "relay_refusal", read: { knobs, object, path, reader in
            guard let value = object["relay_refusal"], value != .null else { return }
            let here = ScenarioReader.child(path, "relay_refusal")
            let check = { (text: String) -> String? in
                !text.isEmpty && text.utf8.count <= 400 && text.utf8.allSatisfy({ $0 >= 32 && $0 < 127 })
                    ? nil : "expected 1 to 400 printable ASCII characters (an SMTP reply line)"
            }
            // Its former form, one string for every reason, is read as the unregistered sender's text.
            if case .string = value {
                knobs.relayRefusal.unauthorizedSender = reader.string(object, "relay_refusal", at: path, check: check)
                return
            }
            guard let texts = reader.object(value, at: here, known: RelayRefusal.allCases.map(\.rawValue)) else { return }
            for refusal in RelayRefusal.allCases {
                knobs.relayRefusal[refusal] = reader.string(texts, refusal.rawValue, at: here, default: knobs.relayRefusal[refusal], check: check)
            }
        }, write: { knobs in
            .object(JSONObject(RelayRefusal.allCases.map { ($0.rawValue, JSONValue.string(knobs.relayRefusal[$0])) }))
        }),
    ]

    /// The JSON keys of the `compatibility` object, in the order they are written, then former
    /// names still read.
    static let keys = knobs.map(\.name) + ["token_content_type_error"]

    /// The knobs of the scenario object `object` at `path`, each bad value reported.
    static func read(_ object: JSONObject, at path: String, _ reader: ScenarioReader) -> Compatibility {
        var compatibility = Compatibility()
        for knob in knobs { knob.read(&compatibility, object, path, reader) }
        return compatibility
    }

    /// The knobs as the scenario's `compatibility` object.
    var json: JSONValue {
        var object = JSONObject()
        for knob in Self.knobs { object[knob.name] = knob.write(self) }
        return .object(object)
    }
}
