/// The component schemas of the control API's answers and bodies, by the names the contract gives them.
enum ControlSchemas {
    /// The fault that acted on a notification or a request: its id and action, or null.
    private static let actingFault: ContractSchema = .any.doc("The injected fault that acted on it (`/__mock/faults`); null when none did.")
        .anyOf([.object.required("id", "action").properties(["id": .string, "action": .string]).closed, .null])

    static let controlError: ContractSchema = .object.doc("Every control API error: a message and the field (body, query or header) at fault.").required("error", "field").properties([
            "error": .string.doc("What is wrong."),
            "field": .string.orNull.doc("The field at fault, if one is."),
        ]).closed

    static let keyError: ContractSchema = .object.doc("A refused key operation: the control error plus the kid.").required("error", "field").properties([
            "error": .string,
            "field": .string.orNull,
            "kid": .string.doc("The kid named (empty when none is)."),
            "limit": .integer.doc("`signing_keys.max_published`, when that is the conflict."),
        ]).closed

    static let headlessAuthorizeError: ContractSchema = .object.required("error", "field").properties([
            "error": .string,
            "field": .string.orNull,
            "apple_error": .string.doc("The code Apple's authorize page would show."),
        ]).closed

    static let health: ContractSchema = .object.required("active_kid", "issuer", "status").properties([
            "active_kid": .string.orNull.doc("The kid that signs new tokens."),
            "issuer": .string,
            "status": .string.constant("ok"),
        ]).closed

    static let healthUnavailable: ContractSchema = .object.required("active_kid", "issuer", "state_file", "status").properties([
            "active_kid": .string.orNull.doc("The kid that signs new tokens, as of the last commit."),
            "issuer": .string,
            "state_file": .string.doc("Why the state file cannot be written, e.g. `not writable (disk full)`."),
            "status": .string.constant("unavailable"),
        ]).closed

    static let openAPIDocument: ContractSchema = .object.required("openapi", "info", "paths").properties([
            "openapi": .string.constant("3.1.0"),
            "info": .object,
            "paths": .object,
        ])

    static let mintedIdentityToken: ContractSchema = .object.required("email", "id_token", "sub").properties([
            "email": .string.orNull,
            "id_token": .string,
            "sub": .string,
        ]).closed

    static let headlessDelivery: ContractSchema = .any.oneOf([
            .object.required("form", "method", "url").properties([
                    "form": .object.additional(.string).doc("The fields to POST (`form_post`); empty for GET."),
                    "method": .string.enumeration(["GET", "POST"]),
                    "url": .string.doc("The redirect_uri (POST), or the whole redirect with the answer in its query or fragment (GET)."),
                ]).closed,
            .object.required("message", "method", "target_origin").properties([
                    "message": .string.doc("Exactly what the popup passes to `window.opener.postMessage`: `JSON.stringify({method: \"oauthDone\", data})`, `data` being `{authorization: {code, id_token?, state?}, user?}` or `{error: \"user_cancelled_authorize\"}`."),
                    "method": .string.enumeration(["postMessage"]),
                    "target_origin": .string.doc("The `targetOrigin` it posts to: the redirect_uri's origin (scheme, host, port)."),
                ]).closed,
        ])

    static let nativeCredential: ContractSchema = .object.required("user", "identityToken", "authorizationCode", "email", "fullName", "realUserStatus").properties([
            "user": .string.doc("The team-scoped `sub`."),
            "identityToken": .string,
            "authorizationCode": .string,
            "email": .string.orNull,
            "fullName": .object.orNull.required("givenName", "familyName").properties([
                    "givenName": .string,
                    "familyName": .string,
                ]).closed,
            "realUserStatus": .integer.minimum(0).maximum(2),
        ]).closed

    static let clock: ContractSchema = .object.required("epoch", "frozen", "now", "offset").properties([
            "epoch": .integer.doc("Mock time, seconds since 1970."),
            "frozen": .boolean,
            "now": .string.format("date-time").doc("RFC 3339, UTC."),
            "offset": .integer.doc("Seconds ahead of real time."),
        ]).closed

    static let key: ContractSchema = .object.required("kid", "state", "published_at", "activated_at", "retired_at").properties([
            "kid": .string,
            "state": .string.enumeration(["published", "active", "retired"]),
            "published_at": .string.format("date-time").doc("RFC 3339, UTC."),
            "activated_at": .string.orNull.format("date-time"),
            "retired_at": .string.orNull.format("date-time"),
        ]).closed

    static let keyList: ContractSchema = .object.required("active_kid", "keys").properties([
            "active_kid": .string.orNull,
            "keys": .array.items(.ref("Key")),
        ]).closed

    static let keyState: ContractSchema = .object.required("kid", "state").properties([
            "kid": .string,
            "state": .string.enumeration(["published", "active", "retired"]),
        ]).closed

    static let rotatedKey: ContractSchema = .object.required("kid", "previous", "retired", "state").properties([
            "kid": .string,
            "previous": .string.orNull,
            "retired": .array.items(.string),
            "state": .string.constant("active"),
        ]).closed

    static let user: ContractSchema = .object.required("id", "email", "given_name", "family_name", "hide_email", "real_user_status", "relay_domain", "deleted", "teams").properties([
            "id": .string,
            "email": .string.orNull.doc("Null for a managed account."),
            "given_name": .string,
            "family_name": .string,
            "hide_email": .boolean,
            "real_user_status": .integer.minimum(0).maximum(2),
            "relay_domain": .string.enumeration(["private.icloud.com", "privaterelay.appleid.com", "icloud.com"]),
            "deleted": .boolean,
            "teams": .array.items(.object.required("team_id", "sub", "relay_email", "relay_forwarding").properties([
                        "team_id": .string,
                        "sub": .string,
                        "relay_email": .string,
                        "relay_forwarding": .boolean,
                    ]).closed),
            "managed": .boolean.constant(true).doc("Present on a managed account without an email."),
            "omit_is_private_email": .boolean.constant(true).doc("Present when the user's id_tokens leave is_private_email out."),
        ]).closed

    static let userList: ContractSchema = .object.required("next_offset", "total", "users").properties([
            "users": .array.items(.ref("User")),
            "total": .integer.minimum(0).doc("How many users there are."),
            "next_offset": .integer.orNull.minimum(0).doc("The next page's offset; null after the last page."),
        ]).closed

    static let resetResult: ContractSchema = .object.required("active_kid", "now").properties([
            "active_kid": .string.orNull,
            "now": .string.format("date-time").doc("RFC 3339, UTC."),
        ]).closed

    static let credentialState: ContractSchema = .object.required("state").properties([
            "state": .string.enumeration(["authorized", "revoked", "notFound", "transferred"]),
        ]).closed

    static let accountEventResult: ContractSchema = .object.required("notification", "notifications", "type", "user").properties([
            "notification": .integer.orNull.doc("The named app group's notification id."),
            "notifications": .array.items(.integer),
            "type": .string.doc("The event type as sent (the scenario's `account_deletion_event_type` for a deletion)."),
            "user": .string,
        ]).closed

    static let event: ContractSchema = .object.doc("One change to the mock's state, the notification deliverer's included (`notification-attempted`: `notification`, `status`, `error`, `outcome`): these fields, then the event's own.").required("sequence", "time", "at", "type").properties([
            "sequence": .integer.minimum(1),
            "time": .string.doc("Mock time, RFC 3339 with milliseconds."),
            "at": .integer.doc("Mock time, seconds since 1970."),
            "type": .string.enumeration(["consent-granted", "consent-revoked", "code-issued", "code-redeemed", "codes-expired", "tokens-issued", "refresh-counted", "key-published", "key-activated", "key-retired", "key-schedule-advanced", "clock-changed", "user-added", "transfer-started", "account-deleted", "relay-forwarding-changed", "password-changed", "account-event", "timeline-event-refused", "reset", "fault-fired", "faults-installed", "faults-removed", "notification-attempted", "notifications-cleared", "notification-imported"]),
        ]).open

    static let eventPage: ContractSchema = .object.required("events", "last", "missed").properties([
            "events": .array.items(.ref("Event")),
            "last": .integer.minimum(0),
            "missed": .integer.minimum(0),
        ]).closed

    static let notificationRecord: ContractSchema = .object.required("id", "event", "type", "user", "url", "jwt", "claims", "attempts", "outcome", "fault").properties([
            "id": .integer.minimum(1),
            "event": .object,
            "type": .string,
            "user": .string,
            "url": .string.orNull,
            "jwt": .string.orNull,
            "claims": .object,
            "attempts": .array.items(.object.required("at", "status", "error").properties([
                        "at": .string.format("date-time").doc("RFC 3339, UTC."),
                        "status": .integer.orNull,
                        "error": .string.orNull,
                    ]).closed),
            "outcome": .string.enumeration(["pending", "delivered", "failed", "no_url", "dropped", "abandoned"]),
            "fault": actingFault,
        ]).closed

    static let notificationList: ContractSchema = .object.required("notifications").properties([
            "notifications": .array.items(.ref("NotificationRecord")),
        ]).closed

    static let fieldValues: ContractSchema = .object.doc("Names to values; a name given more than once has an array.").additional(.any.anyOf([
                .string,
                .array.items(.string),
            ]))

    static let requestEntry: ContractSchema = .object.doc("One journaled request.").required("id", "time", "peer", "tls", "control", "method", "path", "route", "query", "form", "body", "body_truncated", "headers", "client_id", "grant_type", "client_secret", "status", "error", "reason", "events", "microseconds", "response_bytes", "fault").properties([
            "id": .integer,
            "time": .string.format("date-time").doc("RFC 3339, UTC."),
            "peer": .string.orNull,
            "tls": .boolean,
            "control": .boolean.doc("A `/__mock` request."),
            "method": .string.orNull,
            "path": .string.orNull,
            "route": .string.orNull.doc("The route template that matched."),
            "query": .ref("FieldValues"),
            "form": .any.doc("The form fields, `client_secret` removed.").anyOf([
                    .ref("FieldValues"),
                    .null,
                ]),
            "body": .string.orNull,
            "body_truncated": .boolean,
            "headers": .object.additional(.string),
            "client_id": .string.orNull,
            "grant_type": .string.orNull,
            "client_secret": .any.doc("The client_secret decoded, its signature dropped, or why it could not be.").anyOf([
                    .object.required("header", "claims").properties([
                            "header": .object,
                            "claims": .object,
                        ]).closed,
                    .object.required("malformed").properties([
                            "malformed": .string,
                        ]).closed,
                    .null,
                ]),
            "status": .integer.orNull,
            "error": .string.orNull.doc("Apple's `error` code."),
            "reason": .string.orNull.doc("Why the mock refused, in the developer's words."),
            "events": .array.items(.integer).doc("Sequence numbers of the events it caused."),
            "microseconds": .integer,
            "response_bytes": .integer,
            "fault": actingFault,
        ]).closed

    static let requestPage: ContractSchema = .object.required("requests", "last", "missed", "newest").properties([
            "requests": .array.items(.ref("RequestEntry")),
            "last": .integer,
            "missed": .integer,
            "newest": .integer.minimum(0).doc("The id of the newest request the journal keeps, whatever the filters: pass it as `after` later to see only what comes from here on."),
        ]).closed

    static let journalCount: ContractSchema = .object.required("count").properties([
            "count": .integer.minimum(0),
        ]).closed

    static let journalCleared: ContractSchema = .object.required("cleared").properties([
            "cleared": .integer.minimum(0),
        ]).closed

    static let tokenDefect: ContractSchema = .string.enumeration(["expired", "not-yet-valid", "wrong-issuer", "wrong-audience", "bad-signature", "unknown-kid", "alg-none", "hs256-public-key", "missing-sub", "nonce-mismatch", "retired-key", "iat-far-past"]).doc("What a forged token gets wrong; each is the genuine token with one thing changed. `expired`: exp an hour past; `not-yet-valid`: iat an hour ahead; `wrong-issuer`: iss `https://appleid.apple.com.attacker.example`; `wrong-audience`: aud `com.attacker.app`; `bad-signature`: one signature bit flipped; `unknown-kid`: a kid /auth/keys does not publish, signed by the active key; `alg-none`: alg none, empty signature; `hs256-public-key`: HS256 keyed with the PEM of the active key's verifying half; `missing-sub`: no sub (a notification: none in its event); `nonce-mismatch`: another nonce; `retired-key`: signed by the key retired last (before any retirement, a key never published); `iat-far-past`: iat 30 days ago, exp still ahead.")

    static let forgedToken: ContractSchema = .object.required("defect", "check").properties([
            "id_token": .string.doc("The identity token (kind id_token)."),
            "payload": .string.doc("The notification JWT (kind notification): `{\"payload\": …}` is the body Apple posts."),
            "defect": .any.oneOf([
                    .ref("TokenDefect"),
                    .null,
                ]),
            "check": .string.orNull.doc("The check a backend must make to refuse the defect; null for a genuine token."),
        ]).closed

    /// What a fault matches, how often it fires and what it does: the fields a fault as given and an
    /// installed one share. `types` are the notification types it names (an installed fault shows
    /// `account-deleted` as `account-delete`).
    private static func faultFields(types: [ContractJSON]) -> [(String, ContractSchema)] {
        [
            ("target", .string.enumeration(["http", "notifications"]).doc("Default http.")),
            ("method", .string.enumeration(["GET", "POST"]).doc("A method the path takes; absent: any.")),
            ("path", .string.enumeration(["/auth/authorize", "/auth/token", "/auth/revoke", "/auth/keys", "/auth/usermigrationinfo", "/.well-known/openid-configuration"]).doc("One of Apple's routes (required for target http); never /__mock.")),
            ("client_id", .string.maxLength(1024)),
            ("grant_type", .string.maxLength(1024)),
            ("type", .string.enumeration(types).doc("Notifications: the event type.")),
            ("times", .integer.minimum(1).maximum(1000000)),
            ("always", .boolean.constant(true)),
            ("probability", .number.minimum(0).maximum(1).doc("Drawn from the fault stream, seeded by --seed.")),
            ("action", .string.enumeration(["respond", "delay", "close", "reset", "truncate", "stall", "omit_signing_key", "drop", "duplicate", "reorder", "once"]).doc("http: respond, delay, close, reset, truncate, stall, omit_signing_key (/auth/keys only: Apple's answer without the signing key); notifications: drop, duplicate, delay, reorder, once (one attempt, never retried).")),
            ("status", .integer.minimum(200).maximum(599).doc("respond only.")),
            ("headers", .object.maxProperties(32).additional(.string.maxLength(8192)).doc("respond only.")),
            ("body", .string.maxLength(65536).doc("respond only.")),
            ("delay_ms", .integer.minimum(0).maximum(600000).doc("Before the action; required (≥ 1) for delay.")),
            ("after_bytes", .integer.minimum(0).maximum(2147483647).doc("truncate and stall: body bytes sent before the cut.")),
        ]
    }

    static let fault: ContractSchema = .object.doc("A fault: what it matches (`target` http: `path`, `method`, `client_id`, `grant_type` from the form or query; `target` notifications: `type`, `client_id` of the app group), how often it fires (one of `times`, `always`, `probability`; none: always), and what it does. `respond`, `close` and `reset` answer in Apple's place (the endpoint never sees the request); `delay`, `truncate` and `stall` act on Apple's own answer.").required("action").properties(faultFields(types: AccountEventType.nameList.map { .string($0) }) + [
            ("for_seconds", .integer.minimum(1).maximum(31536000).doc("Seconds of mock time the fault acts for once installed; absent: until removed.")),
            ("incident", .string.enumeration(["discovery-issuer-flip", "jwks-without-signing-key", "token-endpoint-outage", "notifications-once"]).doc("The incident preset that installed it.")),
        ]).closed

    static let installedFault: ContractSchema = .object.doc("An installed fault: its id, the fault as given (every key it uses), how often it fired, and the firings left for `times`.").required("id", "target", "action", "fired", "remaining", "until").properties(faultFields(types: AccountEventType.allCases.map { .string($0.rawValue) }) + [
            ("id", .string.pattern("^f[0-9]+$")),
            ("fired", .integer.minimum(0)),
            ("remaining", .integer.orNull.minimum(0)),
            ("for_seconds", .integer.minimum(1).maximum(31536000).doc("Seconds of mock time the fault acts for once installed; absent: until removed.")),
            ("incident", .string.enumeration(["discovery-issuer-flip", "jwks-without-signing-key", "token-endpoint-outage", "notifications-once"]).doc("The incident preset that installed it.")),
            ("until", .string.orNull.format("date-time").doc("Mock time a for_seconds fault stops acting; null for the others.")),
        ]).closed

    static let faultList: ContractSchema = .object.required("faults").properties([
            "faults": .array.items(.ref("InstalledFault")),
        ]).closed

    static let mailRecipient: ContractSchema = .object.required("address", "verdict", "real_address", "user", "team_id", "reason", "reply").properties([
            "address": .string.doc("As given in RCPT TO."),
            "verdict": .string.enumeration(["forwarded", "direct", "refused"]),
            "real_address": .string.orNull.doc("Where a forwarded message goes: the user's real address."),
            "user": .string.orNull.doc("The scenario user, for a forwarded one."),
            "team_id": .string.orNull.doc("The team whose relay address it is, for a forwarded one."),
            "reason": .string.orNull.doc("Why it was refused, for the developer (Apple's reply never says)."),
            "reply": .string.orNull.doc("The reply the client got for a refused one, e.g. 550 5.1.1 <sender>: unauthorized sender."),
        ]).closed

    static let mailMessage: ContractSchema = .object.required("id", "at", "helo", "tls", "from", "recipients", "size", "subject", "headers", "text", "html", "forwarding").properties([
            "id": .integer.minimum(1),
            "at": .string.format("date-time").doc("Mock time."),
            "helo": .string,
            "tls": .boolean,
            "from": .string.doc("The envelope sender (MAIL FROM); empty for <>."),
            "recipients": .array.items(.ref("MailRecipient")),
            "size": .integer.minimum(0),
            "subject": .string.orNull.doc("Decoded (RFC 2047)."),
            "headers": .array.items(.object.required("name", "value").properties([
                        "name": .string,
                        "value": .string,
                    ]).closed),
            "text": .string.orNull,
            "html": .string.orNull,
            "forwarding": .any.oneOf([
                    .null,
                    .object.required("target", "outcome", "error").properties([
                            "target": .string,
                            "outcome": .string.enumeration(["pending", "delivered", "failed"]),
                            "error": .string.orNull,
                        ]).closed,
                ]),
        ]).closed

    static let mailList: ContractSchema = .object.required("messages").properties([
            "messages": .array.items(.ref("MailMessage")),
        ]).closed

    static let faultIncident: ContractSchema = .object.doc("One of Apple's own incidents, installed as the faults that reproduce it: discovery-issuer-flip (discovery names https://account.apple.com as issuer and host while id_tokens keep https://appleid.apple.com, June 2025), jwks-without-signing-key (/auth/keys lacks the kid that signs), token-endpoint-outage (POST /auth/token answers 503 HTML, 5 minutes of mock time unless minutes says otherwise), notifications-once (no retries).").required("incident").properties([
            "incident": .string.enumeration(["discovery-issuer-flip", "jwks-without-signing-key", "token-endpoint-outage", "notifications-once"]),
            "minutes": .integer.minimum(1).maximum(525600).doc("How long it lasts in mock time; absent: until removed (token-endpoint-outage: 5)."),
        ]).closed

    /// Every control schema, in the contract's order.
    static let all: [(String, ContractSchema)] = [
        ("ControlError", controlError),
        ("KeyError", keyError),
        ("HeadlessAuthorizeError", headlessAuthorizeError),
        ("Health", health),
        ("HealthUnavailable", healthUnavailable),
        ("OpenAPIDocument", openAPIDocument),
        ("MintedIdentityToken", mintedIdentityToken),
        ("HeadlessDelivery", headlessDelivery),
        ("NativeCredential", nativeCredential),
        ("Clock", clock),
        ("Key", key),
        ("KeyList", keyList),
        ("KeyState", keyState),
        ("RotatedKey", rotatedKey),
        ("User", user),
        ("UserList", userList),
        ("ResetResult", resetResult),
        ("CredentialState", credentialState),
        ("AccountEventResult", accountEventResult),
        ("Event", event),
        ("EventPage", eventPage),
        ("NotificationRecord", notificationRecord),
        ("NotificationList", notificationList),
        ("FieldValues", fieldValues),
        ("RequestEntry", requestEntry),
        ("RequestPage", requestPage),
        ("JournalCount", journalCount),
        ("JournalCleared", journalCleared),
        ("TokenDefect", tokenDefect),
        ("ForgedToken", forgedToken),
        ("Fault", fault),
        ("InstalledFault", installedFault),
        ("FaultList", faultList),
        ("MailRecipient", mailRecipient),
        ("MailMessage", mailMessage),
        ("MailList", mailList),
        ("FaultIncident", faultIncident),
    ]

    /// The schemas by name.
    static let byName: [String: ContractSchema] = Dictionary(uniqueKeysWithValues: all)
}
