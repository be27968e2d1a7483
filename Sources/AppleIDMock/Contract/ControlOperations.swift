import MiniHTTP

/// Every control route, declared once, in the order the contract lists them.
enum ControlOperations {
    static let health = ControlOperation(
        method: .get,
        path: "/__mock/health",
        id: "health",
        summary: "Whether the mock is up, and the signing kid",
        description: "Liveness for CI and container health checks. The one control route that needs no control token. It answers at once, whatever the state file's writer is doing, naming the signing kid as of the last commit; 503 while the state file cannot be written.",
        answers: [
            .answer(200, .json("Up.", .ref("Health"), examples: #"{"up": {"value": {"active_kid": "W2ek7HdPaL", "issuer": "https://appleid.apple.com", "status": "ok"}}}"#)),
            .answer(503, .json("Up, but the state file (`serve --state`) cannot be written: changes are answered 503 until it can.", .ref("HealthUnavailable"), examples: #"{"disk-full": {"value": {"active_kid": "W2ek7HdPaL", "issuer": "https://appleid.apple.com", "state_file": "not writable (disk full)", "status": "unavailable"}}}"#)),
            .refusal(403, .forbidden),
        ],
        secured: false)

    static let openapi = ControlOperation(
        method: .get,
        path: "/__mock/openapi.json",
        id: "openapi",
        summary: "This document: the OpenAPI 3.1 contract of every route",
        description: "The committed `Sources/AppleIDMock/Contract/openapi.json`, compiled into the binary and served byte for byte.",
        answers: [
            .answer(200, .json("The document.", .ref("OpenAPIDocument"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let dashboardRedirect = ControlOperation(
        method: .get,
        path: "/__mock",
        id: "dashboardRedirect",
        tags: ["Dashboard"],
        summary: "Redirects to the dashboard",
        description: "`302` to `/__mock/`, for a developer who types the bare prefix. Answers without the control token, like the page it points to.",
        answers: [
            .answer(302, .empty("To the dashboard. No body.", headers: ##"{"Location": {"required": true, "schema": {"type": "string", "const": "/__mock/"}}, "Cache-Control": {"$ref": "#/components/headers/NoStore"}}"##)),
            .refusal(403, .forbidden),
        ],
        secured: false)

    static let dashboard = ControlOperation(
        method: .get,
        path: "/__mock/",
        id: "dashboard",
        tags: ["Dashboard"],
        summary: "The dashboard: a page to see and drive the mock from a browser",
        description: "The page's shell: static HTML with the sections (users, keys, clock, notifications, requests, mail, events), the forms and a token form; no state. Its script loads the data from `GET /__mock/dashboard` and sends every action to the control API routes the tests and the CLI use. Answers without the control token (a browser's navigation carries none; the data it loads needs it), behind the Host and Origin checks.",
        answers: [
            .answer(200, .media("The page.", "text/html", .string, headers: dashboardHeaders(cache: "NoStore"))),
            .refusal(403, .forbidden),
        ],
        secured: false)

    static let dashboardScript = ControlOperation(
        method: .get,
        path: "/__mock/dashboard.js",
        id: "dashboardScript",
        tags: ["Dashboard"],
        summary: "The dashboard's script",
        description: "Plain JavaScript, no build step: loads the data fragment into the page, long-polls the event feed, the request journal and the mailbox, and calls the control API. Answers without the control token.",
        answers: [
            .answer(200, .media("The script.", "text/javascript", .string, headers: dashboardHeaders(cache: "NoCache"))),
            .refusal(403, .forbidden),
        ],
        secured: false)

    static let dashboardStyle = ControlOperation(
        method: .get,
        path: "/__mock/dashboard.css",
        id: "dashboardStyle",
        tags: ["Dashboard"],
        summary: "The dashboard's style sheet",
        description: "Answers without the control token.",
        answers: [
            .answer(200, .media("The style sheet.", "text/css", .string, headers: dashboardHeaders(cache: "NoCache"))),
            .refusal(403, .forbidden),
        ],
        secured: false)

    static let dashboardData = ControlOperation(
        method: .get,
        path: "/__mock/dashboard",
        id: "dashboardData",
        tags: ["Dashboard"],
        summary: "The dashboard's data: every section as one HTML fragment",
        description: "Rendered on the server, every value HTML-escaped: an element per section (`data-slot=\"users\"`, `keys`, `clock`, `notifications`, `requests`, `mail`, `events`, `lists`, most with a `…-summary` line of counts) and a `meta` element with the cursors the page's long polls start from; each slot and each table row with an id starts a line. Bounded: the first 2,000 users (\"showing N of M\" beyond), the newest 100 notifications (a row per attempt, the JWT's claims decoded), requests (the dashboard's own left out), messages and events. Buttons carry the control API call they make: `data-method`, `data-path`, `data-body`.",
        parameters: [
            .query("route", .string.maxLength(512), doc: "Only requests to this path, as sent or as a route template (`/__mock/keys/{kid}`), starting with `/`, at most 512 bytes; empty is no filter.", example: #""/auth/token""#),
            .query("client", .string.maxLength(256), doc: "Only requests that carried this `client_id`, at most 256 bytes; empty is no filter.", example: #""com.example.web""#),
        ],
        answers: [
            .answer(200, .media("The fragment.", "text/html", .string.doc("An HTML fragment."), headers: dashboardHeaders(cache: "NoStore"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let mintIdentityToken = ControlOperation(
        method: .post,
        path: "/__mock/id-token",
        id: "mintIdentityToken",
        summary: "Mints an id_token as a sign-in would, changing nothing",
        description: "For backend tests that only need a token to present: the claims a web sign-in of `user` at `client_id` would give now (email as consent chose it, `transfer_sub` during a transfer). No code, no consent, no event.",
        body: .fields([
            .required("user", .string.doc("A scenario user id. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("client_id", .string.orNull.doc("The client (audience); default: the scenario's first client. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("nonce", .string.orNull.doc("Copied into the `nonce` claim. At most 1024 UTF-8 bytes.").maxLength(1024)),
            .optional("hide_email", .boolean.orNull.doc("Hide My Email; null or absent: the user's own setting.")),
        ], examples: #"{"bob": {"value": {"user": "bob", "client_id": "com.example.web", "nonce": "n-0S6_WzA2Mj"}}}"#),
        answers: [
            .answer(200, .json("The token.", .ref("MintedIdentityToken"), examples: #"{"bob": {"value": {"email": "5zbtyfeby0@privaterelay.appleid.com", "id_token": "eyJraWQiOiJXMmVrN0hkUGFMIiwiYWxnIjoiUlMyNTYifQ.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIn0.c2lnbmF0dXJl", "sub": "716012.b93725c4dd2a6799907cc017f4d605e1.2122"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
            .refusal(503, .unavailable),
        ])

    static let headlessAuthorize = ControlOperation(
        method: .post,
        path: "/__mock/authorize",
        id: "headlessAuthorize",
        summary: "The web authorize flow without a browser",
        description: "Takes the authorize parameters and the user's choices as JSON and answers how Apple would deliver the result: hand `url` (and, for `POST`, `form`) to the backend's callback; for `response_mode` `web_message`, the exact `message` string the popup posts to `window.opener` and its `target_origin`. Refusals name Apple's code in `apple_error`.",
        body: .fields([
            .optional("client_id", .string.orNull.doc("The Services ID (a bundle id is refused: web sign-in needs a Services ID). At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("redirect_uri", .string.orNull.doc("A return URL registered for the client. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("response_type", .string.orNull.doc("`code`, or `code id_token` for an id_token in the answer too (the mock takes the two words in either order). At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("response_mode", .string.orNull.doc("How the answer is delivered: `query`, `fragment`, `form_post` or `web_message`. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("scope", .string.orNull.doc("Space-separated: `name`, `email`, `openid`. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("state", .string.orNull.doc("Echoed back unchanged. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("nonce", .string.orNull.doc("Copied into the id_token's `nonce` claim. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("code_challenge", .string.orNull.doc("PKCE (RFC 7636): 43 to 128 unreserved characters. Not documented by Apple, enforced since 2024 (docs/apple-behaviour.md §1.2 [O]). At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("code_challenge_method", .string.orNull.doc("`S256`, or `plain` (the default when a challenge is given. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("user", .string.orNull.doc("The scenario user who presses Continue; default: the scenario's `auto_approve` user. At most 64 UTF-8 bytes.").maxLength(64)),
            .optional("hide_email", .boolean.orNull.doc("Hide My Email; null or absent: the user's own setting.")),
            .optional("given_name", .string.orNull.doc("The first name as the user edited it. At most 1024 UTF-8 bytes.").maxLength(1024)),
            .optional("family_name", .string.orNull.doc("The last name as the user edited it. At most 1024 UTF-8 bytes.").maxLength(1024)),
            .optional("cancel", .boolean.orNull.doc("`true`: the user presses Cancel (`error=user_cancelled_authorize`).")),
            .optional("defect", .any.oneOf([
                    .ref("TokenDefect"),
                    .null,
                ]).doc("Spoils the id_token as the defect says (and the one the code is exchanged for); null or absent: genuine.")),
        ], examples: #"{"formPost": {"value": {"client_id": "com.example.web", "redirect_uri": "https://app.example.com/callback", "response_type": "code id_token", "response_mode": "form_post", "scope": "name email", "state": "af0ifjsldkj", "user": "alice"}}}"#),
        answers: [
            .answer(200, .json("How the answer reaches the redirect_uri, or, for `web_message`, the opener.", .ref("HeadlessDelivery"), examples: #"{"formPost": {"value": {"form": {"code": "cbf263378bb5836f545fc2eee84d79fca.0.csxw.U3LfRN9jZ6gxw_f42NHoOQ", "id_token": "eyJraWQiOiJXMmVrN0hkUGFMIiwiYWxnIjoiUlMyNTYifQ.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIn0.c2lnbmF0dXJl", "state": "af0ifjsldkj", "user": "{\"name\":{\"firstName\":\"Alice\",\"lastName\":\"Appleseed\"},\"email\":\"alice@example.com\"}"}, "method": "POST", "url": "https://app.example.com/callback"}}, "query": {"value": {"form": {}, "method": "GET", "url": "https://app.example.com/callback?code=c85d8a1faaa546b5a7957855ad5b0dae4.0.yftr.TQFB-8jTND3y3wFKvt9rzA&state=s1"}}, "webMessage": {"value": {"message": "{\"method\":\"oauthDone\",\"data\":{\"authorization\":{\"code\":\"cbf263378bb5836f545fc2eee84d79fca.0.csxw.U3LfRN9jZ6gxw_f42NHoOQ\",\"id_token\":\"eyJraWQiOiJXMmVrN0hkUGFMIiwiYWxnIjoiUlMyNTYifQ.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIn0.c2lnbmF0dXJl\",\"state\":\"af0ifjsldkj\"},\"user\":{\"email\":\"alice@example.com\",\"name\":{\"firstName\":\"Alice\",\"lastName\":\"Appleseed\"}}}}", "method": "postMessage", "target_origin": "https://app.example.com"}}}"#)),
            .answer(400, .json("Bad input, or an authorize request Apple would refuse (`apple_error` is Apple's page code).", .ref("HeadlessAuthorizeError"), examples: #"{"unknownClient": {"value": {"apple_error": "invalid_request", "error": "Invalid client id or web redirect url.", "field": "client_id"}}, "badField": {"value": {"error": "expected a string", "field": "state"}}}"#)),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
            .refusal(503, .unavailable),
        ])

    static let nativeSignIn = ControlOperation(
        method: .post,
        path: "/__mock/sign-in",
        id: "nativeSignIn",
        summary: "A native (iOS) sign-in: the credential an app receives",
        description: "What `ASAuthorizationAppleIDCredential` gives the app, with its property names: redeem `authorizationCode` at `/auth/token` with the bundle id and no redirect_uri. `email` and `fullName` only on the first authorization.",
        body: .fields([
            .required("user", .string.doc("A scenario user id. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .required("client_id", .string.doc("An App ID (bundle id) of the scenario. At most 4096 UTF-8 bytes.").maxLength(4096)),
            .optional("scopes", .array.orNull.doc("`name`, `email` (default: both); at most 16.").maxItems(16).items(.string.enumeration(["name", "email"]))),
            .optional("nonce", .string.orNull.doc("Copied into the identityToken's `nonce` claim. At most 1024 UTF-8 bytes.").maxLength(1024)),
            .optional("hide_email", .boolean.orNull.doc("Hide My Email; null or absent: the user's own setting.")),
            .optional("defect", .any.oneOf([
                    .ref("TokenDefect"),
                    .null,
                ]).doc("Spoils the id_token as the defect says (and the one the code is exchanged for); null or absent: genuine.")),
        ], examples: #"{"alice": {"value": {"user": "alice", "client_id": "com.example.app", "scopes": ["name", "email"]}}}"#),
        answers: [
            .answer(200, .json("The credential.", .ref("NativeCredential"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
            .refusal(503, .unavailable),
        ])

    static let forgeToken = ControlOperation(
        method: .post,
        path: "/__mock/tokens",
        id: "forgeToken",
        summary: "Forges an id_token or notification JWT, genuine or with one defect",
        description: "For a backend's own security tests; changes nothing. The claims are those a sign-in (or the account event) would give now, with `claims` set over them (null removes a claim), then `defect` applied.",
        body: .fields([
            .optional("kind", .string.orNull.enumeration(["id_token", "notification", nil]).doc("`id_token` (default) or `notification`, a server-to-server notification JWT.")),
            .required("user", .string.maxLength(4096).doc("A scenario user id (or a sub). At most 4096 UTF-8 bytes.")),
            .optional("client_id", .string.orNull.maxLength(4096).doc("The audience; default: the scenario's first client. At most 4096 UTF-8 bytes.")),
            .optional("nonce", .string.orNull.maxLength(1024).doc("The id_token's nonce (not for a notification). At most 1024 UTF-8 bytes.")),
            .optional("claims", .object.orNull.doc("Set over the token's claims; a null value removes the claim.")),
            .optional("defect", .any.oneOf([
                    .ref("TokenDefect"),
                    .null,
                ]).doc("What the token gets wrong; `nonce-mismatch` is for id_tokens only. Null or absent: genuine.")),
            .optional("type", .string.orNull.enumeration(["consent-revoked", "account-delete", "email-disabled", "email-enabled", nil]).doc("The notification's event (kind notification only; default consent-revoked).")),
        ], examples: #"{"expired": {"value": {"user": "alice", "client_id": "com.example.app", "defect": "expired"}}}"#),
        answers: [
            .answer(200, .json("The token, and what it gets wrong.", .ref("ForgedToken"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
            .refusal(503, .unavailable),
        ])

    static let listFaults = ControlOperation(
        method: .get,
        path: "/__mock/faults",
        id: "listFaults",
        summary: "The installed faults and how often each fired",
        description: "In the order they match: the first that fires acts.",
        answers: [
            .answer(200, .json("The faults.", .ref("FaultList"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(503, .unavailable),
        ])

    static let addFault = ControlOperation(
        method: .post,
        path: "/__mock/faults",
        id: "addFault",
        summary: "Installs a fault on an Apple route or on notification delivery, or an incident's faults",
        description: "The body is a fault as a scenario's `faults` holds one, or an incident (`{\"incident\": name, \"minutes\": n}`), which installs the faults that reproduce it and answers them all.",
        body: .shapes([
            .ref("Fault"),
            .ref("FaultIncident"),
        ], examples: #"{"token503": {"value": {"path": "/auth/token", "times": 1, "action": "respond", "status": 503, "headers": {"Content-Type": "text/html"}, "body": "<html>Service Unavailable</html>"}}, "slowKeys": {"value": {"method": "GET", "path": "/auth/keys", "action": "delay", "delay_ms": 2000}}, "issuerFlip": {"value": {"incident": "discovery-issuer-flip"}}}"#),
        answers: [
            .answer(201, .json("Installed.", .any.oneOf([
                    .ref("InstalledFault"),
                    .object.required("incident", "faults").properties([
                            "incident": .string,
                            "faults": .array.items(.ref("InstalledFault")),
                        ]).closed,
                ]))),
            .refusal(400, .badRequest),
            .answer(409, .json("256 faults are installed already.", .ref("ControlError"))),
            .refusal(415, .unsupportedMediaType),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(503, .unavailable),
        ])

    static let removeFaults = ControlOperation(
        method: .delete,
        path: "/__mock/faults",
        id: "removeFaults",
        summary: "Removes every fault, or every fault of one incident",
        description: "Answers how many went. With `incident`, only the faults that incident installed.",
        parameters: [
            .query("incident", .string.enumeration(["discovery-issuer-flip", "jwks-without-signing-key", "token-endpoint-outage", "notifications-once"])),
        ],
        answers: [
            .answer(200, .json("Removed.", .object.required("removed").properties([
                    "removed": .integer.minimum(0),
                ]).closed)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(503, .unavailable),
        ])

    static let showFault = ControlOperation(
        method: .get,
        path: "/__mock/faults/{id}",
        id: "showFault",
        summary: "One fault and how often it fired",
        description: "",
        parameters: [
            .path("id", .string, doc: "The fault's id.", example: #""f1""#),
        ],
        answers: [
            .answer(200, .json("The fault.", .ref("InstalledFault"))),
            .answer(404, .json("No fault with this id.", .ref("ControlError"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(503, .unavailable),
        ])

    static let removeFault = ControlOperation(
        method: .delete,
        path: "/__mock/faults/{id}",
        id: "removeFault",
        summary: "Removes one fault",
        description: "Answers the fault as it was.",
        parameters: [
            .path("id", .string, doc: "The fault's id.", example: #""f1""#),
        ],
        answers: [
            .answer(200, .json("Removed.", .ref("InstalledFault"))),
            .answer(404, .json("No fault with this id.", .ref("ControlError"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(503, .unavailable),
        ])

    static let clock = ControlOperation(
        method: .get,
        path: "/__mock/clock",
        id: "clock",
        summary: "The mock clock",
        description: "Mock time, whether it is frozen, and its offset from real time.",
        answers: [
            .answer(200, .json("The clock.", .ref("Clock"), examples: #"{"running": {"value": {"epoch": 1795471656, "frozen": false, "now": "2026-11-23T22:07:36Z", "offset": 0}}}"#)),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let moveClock = ControlOperation(
        method: .post,
        path: "/__mock/clock",
        id: "moveClock",
        summary: "Advances, sets or freezes the mock clock (rotations follow)",
        description: "Any of `freeze`, `set`, `advance`, applied in that order (`freeze: false` last). Every lifetime follows the clock; the key rotation pattern runs for the time passed. At least one field must be given; the clock stays within 1970-01-01T00:00:00Z and the latest time tokens can carry.",
        body: .fields([
            .optional("advance", .number.orNull.doc("Seconds to move (negative: back); within a century.").minimum(-3162240000).maximum(3162240000)),
            .optional("set", .string.orNull.doc("An RFC 3339 time to set the clock to. At most 64 UTF-8 bytes.").maxLength(64)),
            .optional("freeze", .boolean.orNull.doc("`true` stops the clock, `false` lets it run.")),
        ], examples: #"{"advanceAnHour": {"value": {"advance": 3600}}, "freezeAt": {"value": {"set": "2030-01-01T00:00:00Z", "freeze": true}}}"#),
        answers: [
            .answer(200, .json("The clock.", .ref("Clock"), examples: #"{"running": {"value": {"epoch": 1795471656, "frozen": false, "now": "2026-11-23T22:07:36Z", "offset": 0}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
        ])

    static let listKeys = ControlOperation(
        method: .get,
        path: "/__mock/keys",
        id: "listKeys",
        summary: "Every key the mock has known, with its state",
        description: "Published, active (signing) and retired keys with the mock times of each step.",
        parameters: [.query("state", .string.enumeration(["published", "active", "retired"]), doc: "Only the keys in this state.")],
        answers: [
            .answer(200, .json("The keys.", .ref("KeyList"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let publishKey = ControlOperation(
        method: .post,
        path: "/__mock/keys",
        id: "publishKey",
        summary: "Publishes a key (given or generated) without signing with it",
        description: "Apple publishes a key weeks before it signs (docs/apple-behaviour.md §1.5): `pem` (PKCS#8 RSA-2048) under `kid`, or a fresh key; `kid` defaults to a fresh 10-character one.",
        body: .fields([
            .optional("kid", .string.orNull.doc("The key id: 1 to 10 ASCII letters and digits. At most 64 UTF-8 bytes.").maxLength(64).pattern("^[A-Za-z0-9]{1,10}$")),
            .optional("pem", .string.orNull.doc("A PEM RSA-2048 private key (PKCS#8). At most 65536 UTF-8 bytes.").maxLength(65536)),
        ], required: false, examples: #"{"generated": {"value": {"kid": "DEMOKEY001"}}}"#),
        answers: [
            .answer(201, .json("Published.", .ref("KeyState"), examples: #"{"published": {"value": {"kid": "DEMOKEY001", "state": "published"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(409, .keyConflict),
            .refusal(415, .unsupportedMediaType),
        ])

    static let rotateKeys = ControlOperation(
        method: .post,
        path: "/__mock/keys/rotate",
        id: "rotateKeys",
        summary: "One rotation step: a fresh key published and signing",
        description: "Publishes and activates a fresh key at once; the previous keys stay published, the oldest beyond `signing_keys.max_published` are retired.",
        body: .fields([], doc: "No field is taken: send no body, or `{}`.", required: false),
        answers: [
            .answer(200, .json("Rotated.", .ref("RotatedKey"), examples: #"{"rotated": {"value": {"kid": "WngIJg0AzS", "previous": "W2ek7HdPaL", "retired": [], "state": "active"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(409, .keyConflict),
            .refusal(415, .unsupportedMediaType),
        ])

    static let activateKey = ControlOperation(
        method: .post,
        path: "/__mock/keys/{kid}/activate",
        id: "activateKey",
        summary: "Makes a published key sign new tokens",
        description: "The key must be published and not retired.",
        parameters: [
            .path("kid", .string.pattern("^[A-Za-z0-9]{1,10}$"), doc: "The key id (percent-decoded).", example: #""DEMOKEY001""#),
        ],
        body: .fields([], doc: "No field is taken: send no body, or `{}`.", required: false),
        answers: [
            .answer(200, .json("Active.", .ref("KeyState"), examples: #"{"active": {"value": {"kid": "DEMOKEY001", "state": "active"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(404, .json("No key with this kid (or a kid whose percent-encoding is malformed: no control route).", .ref("KeyError"), examples: #"{"unknown": {"value": {"error": "no key with this kid", "field": "kid", "kid": "nokey"}}}"#)),
            .refusal(409, .keyConflict),
            .refusal(415, .unsupportedMediaType),
        ])

    static let retireKey = ControlOperation(
        method: .delete,
        path: "/__mock/keys/{kid}",
        id: "retireKey",
        summary: "Retires a key from /auth/keys",
        description: "What it signed no longer verifies. The signing key cannot be retired (409).",
        parameters: [
            .path("kid", .string.pattern("^[A-Za-z0-9]{1,10}$"), doc: "The key id (percent-decoded).", example: #""DEMOKEY001""#),
        ],
        answers: [
            .answer(200, .json("Retired.", .ref("KeyState"), examples: #"{"retired": {"value": {"kid": "DEMOKEY001", "state": "retired"}}}"#)),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(404, .json("No key with this kid (or a kid whose percent-encoding is malformed: no control route).", .ref("KeyError"), examples: #"{"unknown": {"value": {"error": "no key with this kid", "field": "kid", "kid": "nokey"}}}"#)),
            .refusal(409, .keyConflict),
        ])

    static let listUsers = ControlOperation(
        method: .get,
        path: "/__mock/users",
        id: "listUsers",
        summary: "Users with account state, a page at a time",
        description: "At most `limit` users (default and most 1000) from `offset`, in order; `next_offset` is where the next page starts, null after the last. The server's memory stays that of one page.",
        parameters: [
            .query("offset", .integer.minimum(0).maximum(100000), doc: "The first user's place in the order (0 is the first)."),
            .query("limit", .integer.minimum(1).maximum(1000), doc: "Most users in the page (default 1000)."),
        ],
        answers: [
            .answer(200, .json("The users.", .ref("UserList"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(400, .badRequest),
        ])

    static let addUser = ControlOperation(
        method: .post,
        path: "/__mock/users",
        id: "addUser",
        summary: "Adds a user at run time",
        description: "A fresh user per test, so a first login never leaks between tests.",
        body: .shapes([
            .object.required("id", "email").properties([
                    "id": .string.doc("1 to 64 letters, digits, `.`, `-`, `_`, not shaped like a `sub`.").maxLength(64),
                    "email": .string.doc("An email address. At most 4096 UTF-8 bytes.").maxLength(4096),
                    "given_name": .string.orNull.doc("First name. At most 256 UTF-8 bytes.").maxLength(256),
                    "family_name": .string.orNull.doc("Last name. At most 256 UTF-8 bytes.").maxLength(256),
                    "hide_email": .boolean.orNull.doc("Hide My Email by default (false unless given)."),
                    "real_user_status": .integer.orNull.minimum(0).maximum(2).doc("0 Unsupported, 1 Unknown, 2 LikelyReal (default)."),
                    "relay_domain": .string.orNull.enumeration(["private.icloud.com", "privaterelay.appleid.com", "icloud.com", nil]).doc("The domain of the user's relay addresses: privaterelay.appleid.com, where nearly every relay address lives and Apple still issues them, or private.icloud.com, where Apple says new ones move later in 2026, or icloud.com, which newer docs also name (an icloud.com address is the relay's only when a user holds it). Default: the scenario's compatibility.relay_domain."),
                    "managed": .boolean.constant(false).doc("Not a managed account (the default)."),
                    "omit_is_private_email": .boolean.doc("The id_token leaves is_private_email out even for this user's relay address, as Apple did for some relay users in 2025 (observed)."),
                ]).closed,
            .object.required("id", "managed").properties([
                    "id": .string.doc("1 to 64 letters, digits, `.`, `-`, `_`, not shaped like a `sub`.").maxLength(64),
                    "given_name": .string.orNull.doc("First name. At most 256 UTF-8 bytes.").maxLength(256),
                    "family_name": .string.orNull.doc("Last name. At most 256 UTF-8 bytes.").maxLength(256),
                    "hide_email": .boolean.constant(false).doc("A managed account has no email to hide."),
                    "real_user_status": .integer.orNull.minimum(0).maximum(2).doc("0 Unsupported, 1 Unknown, 2 LikelyReal (default)."),
                    "relay_domain": .string.orNull.enumeration(["private.icloud.com", "privaterelay.appleid.com", "icloud.com", nil]).doc("The domain of the user's relay addresses: privaterelay.appleid.com, where nearly every relay address lives and Apple still issues them, or private.icloud.com, where Apple says new ones move later in 2026, or icloud.com, which newer docs also name (an icloud.com address is the relay's only when a user holds it). Default: the scenario's compatibility.relay_domain."),
                    "managed": .boolean.constant(true).doc("A Work & School (managed) Apple Account without an email: the email scope gives none (docs/apple-behaviour.md §4)."),
                    "omit_is_private_email": .boolean.doc("The id_token leaves is_private_email out even for this user's relay address, as Apple did for some relay users in 2025 (observed)."),
                ]).closed,
        ], examples: #"{"dave": {"value": {"id": "dave", "email": "dave@example.com", "given_name": "Dave", "family_name": "Dalton"}}}"#),
        answers: [
            .answer(201, .json("Added.", .ref("User"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(409, .json("A user with this id exists already.", .ref("ControlError"), examples: #"{"duplicate": {"value": {"error": "a user with id \"carol\" exists already", "field": "id"}}}"#)),
            .refusal(415, .unsupportedMediaType),
            .refusal(503, .unavailable),
        ])

    static let reset = ControlOperation(
        method: .post,
        path: "/__mock/reset",
        id: "reset",
        summary: "Back to the scenario's initial state; queued notifications abandoned",
        description: "Users, consents, codes, transfers, keys and clock in one operation; codes and tokens from before stop working.",
        body: .fields([], doc: "No field is taken: send no body, or `{}`.", required: false),
        answers: [
            .answer(200, .json("Reset.", .ref("ResetResult"), examples: #"{"reset": {"value": {"active_kid": "W2ek7HdPaL", "now": "2026-11-23T22:07:36Z"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(415, .unsupportedMediaType),
        ])

    static let credentialState = ControlOperation(
        method: .get,
        path: "/__mock/credential-state",
        id: "credentialState",
        summary: "What getCredentialState answers on a device",
        description: "`ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)` for an app's test double: an unknown user is `notFound`, as on a device; an unknown client is a 404.",
        parameters: [
            .requiredQuery("user", .string.minLength(1).maxLength(256), doc: "A scenario user id or a `sub`; at most 256 UTF-8 bytes.", example: #""alice""#),
            .requiredQuery("client_id", .string.minLength(1), doc: "The app's client id.", example: #""com.example.app""#),
        ],
        answers: [
            .answer(200, .json("The state.", .ref("CredentialState"), examples: #"{"authorized": {"value": {"state": "authorized"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(404, .notFound),
        ])

    static let accountEvent = ControlOperation(
        method: .post,
        path: "/__mock/events",
        id: "accountEvent",
        summary: "A user's action at Apple; its notifications follow",
        description: "A user does at Apple what only a user can do (docs/apple-behaviour.md §7): the state changes at once, the signed server-to-server notifications follow. `notification` is the named app group's; a deletion tells every app group. `password-changed` (no client_id) ends the user's refresh tokens for every app and notifies none.",
        body: .shapes([
            .object.required("type", "user", "client_id").properties([
                    "type": .string.doc("The event.").enumeration(["consent-revoked", "account-delete", "account-deleted", "email-disabled", "email-enabled"]),
                    "user": .string.doc("A scenario user id. At most 4096 UTF-8 bytes.").maxLength(4096),
                    "client_id": .string.doc("A client of the app group. At most 4096 UTF-8 bytes.").maxLength(4096),
                ]).closed,
            .object.required("type", "user").properties([
                    "type": .string.constant("password-changed").doc("The user changed their Apple Account password (docs/apple-behaviour.md §9): the user's refresh tokens for every app answer invalid_grant, no notification is sent, the credential state stays authorized (undocumented)."),
                    "user": .string.doc("A scenario user id or sub. At most 4096 UTF-8 bytes.").maxLength(4096),
                ]).closed,
        ], examples: #"{"revoke": {"value": {"type": "consent-revoked", "user": "alice", "client_id": "com.example.web"}}, "password-changed": {"value": {"type": "password-changed", "user": "alice"}}}"#),
        answers: [
            .answer(202, .json("Done; notifications queued.", .ref("AccountEventResult"), examples: #"{"revoked": {"value": {"notification": 1, "notifications": [1], "type": "consent-revoked", "user": "alice"}}, "password-changed": {"value": {"notification": null, "notifications": [], "type": "password-changed", "user": "alice"}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .refusal(404, .notFound),
            .refusal(409, .conflict),
            .refusal(415, .unsupportedMediaType),
        ])

    static let eventFeed = ControlOperation(
        method: .get,
        path: "/__mock/events",
        id: "eventFeed",
        summary: "The event feed, long-polled",
        description: "Every change to the mock's state, in order, after `after`; with `wait`, held until an event after it (of those types) is recorded. `missed` counts events after `after` that the bounded feed no longer holds.",
        parameters: [
            .query("after", .integer.minimum(0).maximum(.number(UInt64.max)), doc: "Events after this sequence number.", example: #"0"#),
            .query("wait", .number.minimum(0).maximum(60), doc: "Long poll: hold the request up to this many seconds until something new arrives.", example: #"1"#),
            .query("type", .string.pattern("^(consent\\-granted|consent\\-revoked|code\\-issued|code\\-redeemed|codes\\-expired|tokens\\-issued|key\\-published|key\\-activated|key\\-retired|key\\-schedule\\-advanced|clock\\-changed|user\\-added|transfer\\-started|account\\-deleted|relay\\-forwarding\\-changed|account\\-event|timeline\\-event\\-refused|reset)(,(consent\\-granted|consent\\-revoked|code\\-issued|code\\-redeemed|codes\\-expired|tokens\\-issued|key\\-published|key\\-activated|key\\-retired|key\\-schedule\\-advanced|clock\\-changed|user\\-added|transfer\\-started|account\\-deleted|relay\\-forwarding\\-changed|account\\-event|timeline\\-event\\-refused|reset)){0,17}$"), doc: "Only these event types, separated by commas (at most 18).", example: #""consent-revoked,account-event""#),
            .query("limit", .integer.minimum(1).maximum(1000), doc: "Most events in the answer (default 1000).", example: #"100"#),
        ],
        answers: [
            .answer(200, .json("A page of the feed.", .ref("EventPage"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let notificationLog = ControlOperation(
        method: .get,
        path: "/__mock/notifications",
        id: "notificationLog",
        summary: "The notification delivery log, long-polled",
        description: "Each server-to-server notification: event, target URL, JWT and decoded claims, attempts, outcome. With `wait`, held until a notification after `after` has settled.",
        parameters: [
            .query("after", .integer.minimum(0).maximum(.number(UInt64.max)), doc: "Notifications after this id.", example: #"0"#),
            .query("wait", .number.minimum(0).maximum(60), doc: "Long poll: hold the request up to this many seconds until something new arrives.", example: #"1"#),
        ],
        answers: [
            .answer(200, .json("The log.", .ref("NotificationList"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let clearNotifications = ControlOperation(
        method: .delete,
        path: "/__mock/notifications",
        id: "clearNotifications",
        summary: "Clears settled notifications (and pending ones with pending=cancel)",
        description: "`pending=cancel` first abandons the pending ones, so all go.",
        parameters: [
            .query("pending", .string.enumeration(["cancel"]), doc: "`cancel`: abandon pending notifications too."),
        ],
        answers: [
            .answer(200, .json("Cleared.", .ref("NotificationList"), examples: #"{"cleared": {"value": {"notifications": []}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let requestJournal = ControlOperation(
        method: .get,
        path: "/__mock/requests",
        id: "requestJournal",
        tags: ["Request journal"],
        summary: "The request journal, long-polled",
        description: "Every request to Apple's routes (and, marked `control`, to `/__mock`) with its fields, answer and the events it caused, oldest first, after `after`; with `wait`, held until a matching entry arrives. A bad filter or an unknown parameter is a 400.",
        parameters: [
            .query("method", .string.pattern("^[A-Z]{1,32}$"), doc: "Only requests with this method, in capitals (`POST`).", example: #""POST""#),
            .query("path", .string.pattern("^/").maxLength(2048), doc: "Only requests to this path as sent (`/auth/token`), or to paths the route template took (`/__mock/keys/{kid}`).", example: #""/auth/token""#),
            .query("client_id", .string.minLength(1).maxLength(256), doc: "Only requests that carried this client_id (form, query or JSON body).", example: #""com.example.web""#),
            .query("grant_type", .string.minLength(1).maxLength(256), doc: "Only requests whose form had this grant_type.", example: #""authorization_code""#),
            .query("status", .any.anyOf([
                    .integer.minimum(100).maximum(599),
                    .string.pattern("^[1-5]xx$"),
                ]), doc: "Only requests answered with this status, or with a status of this class (`4xx`).", example: #"400"#),
            .query("control", .boolean, doc: "`true`: only `/__mock` requests; `false`: only Apple's routes (and unrouted paths).", example: #"false"#),
            .query("after", .integer.minimum(0).maximum(.number(UInt64.max)), doc: "Only entries after this id.", example: #"0"#),
            .query("limit", .integer.minimum(1).maximum(1000), doc: "Most entries in the answer.", example: #"100"#),
            .query("wait", .number.minimum(0).maximum(60), doc: "Long poll: hold the request up to this many seconds until something new arrives.", example: #"1"#),
        ],
        answers: [
            .answer(200, .json("A page of the journal.", .ref("RequestPage"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(409, .json("The journal is off (`serve --journal off`).", .ref("ControlError"), examples: #"{"off": {"value": {"error": "the request journal is off (serve --journal off)", "field": null}}}"#)),
        ])

    static let clearRequestJournal = ControlOperation(
        method: .delete,
        path: "/__mock/requests",
        id: "clearRequestJournal",
        tags: ["Request journal"],
        summary: "Clears the request journal",
        description: "Forgets every journaled request; ids go on from where they were. Takes no parameters (any is a 400).",
        answers: [
            .answer(200, .json("Cleared: how many entries were dropped.", .ref("JournalCleared"), examples: #"{"cleared": {"value": {"cleared": 12}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(409, .json("The journal is off (`serve --journal off`).", .ref("ControlError"), examples: #"{"off": {"value": {"error": "the request journal is off (serve --journal off)", "field": null}}}"#)),
        ])

    static let countRequests = ControlOperation(
        method: .get,
        path: "/__mock/requests/count",
        id: "countRequests",
        tags: ["Request journal"],
        summary: "How many journaled requests match",
        description: "WireMock's `verify`: assert a backend called Apple exactly once. Takes the journal's filters.",
        parameters: [
            .query("method", .string.pattern("^[A-Z]{1,32}$"), doc: "Only requests with this method, in capitals (`POST`).", example: #""POST""#),
            .query("path", .string.pattern("^/").maxLength(2048), doc: "Only requests to this path as sent (`/auth/token`), or to paths the route template took (`/__mock/keys/{kid}`).", example: #""/auth/token""#),
            .query("client_id", .string.minLength(1).maxLength(256), doc: "Only requests that carried this client_id (form, query or JSON body).", example: #""com.example.web""#),
            .query("grant_type", .string.minLength(1).maxLength(256), doc: "Only requests whose form had this grant_type.", example: #""authorization_code""#),
            .query("status", .any.anyOf([
                    .integer.minimum(100).maximum(599),
                    .string.pattern("^[1-5]xx$"),
                ]), doc: "Only requests answered with this status, or with a status of this class (`4xx`).", example: #"400"#),
            .query("control", .boolean, doc: "`true`: only `/__mock` requests; `false`: only Apple's routes (and unrouted paths).", example: #"false"#),
            .query("after", .integer.minimum(0).maximum(.number(UInt64.max)), doc: "Only entries after this id.", example: #"0"#),
        ],
        answers: [
            .answer(200, .json("The count.", .ref("JournalCount"), examples: #"{"once": {"value": {"count": 1}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
            .answer(409, .json("The journal is off (`serve --journal off`).", .ref("ControlError"), examples: #"{"off": {"value": {"error": "the request journal is off (serve --journal off)", "field": null}}}"#)),
        ])

    static let mailList = ControlOperation(
        method: .get,
        path: "/__mock/mail",
        id: "mailList",
        summary: "What the SMTP port received, with the relay's verdicts, long-polled",
        description: "Each message (oldest first): envelope, the Private Email Relay's verdict on every recipient (`forwarded` with the real address, `direct` for a non-relay address, `refused` with the developer's reason and the 550 the client got; a refused recipient is its own entry, with no content), header fields, decoded subject, text and HTML, and the copy to `--mail-forward`. With `wait`, held until a message after `after` arrives. Served only with `serve --smtp-port`; empty otherwise.",
        parameters: [
            .query("after", .integer.minimum(0).maximum(.number(UInt64.max)), doc: "Messages after this id.", example: #"0"#),
            .query("limit", .integer.minimum(1).maximum(1000), doc: "At most this many (default 100).", example: #"100"#),
            .query("wait", .number.minimum(0).maximum(60), doc: "Long poll: hold the request up to this many seconds until something new arrives.", example: #"1"#),
        ],
        answers: [
            .answer(200, .json("The messages.", .ref("MailList"))),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let clearMail = ControlOperation(
        method: .delete,
        path: "/__mock/mail",
        id: "clearMail",
        summary: "Forgets every message",
        description: "Ids go on increasing.",
        answers: [
            .answer(200, .json("Cleared.", .ref("MailList"), examples: #"{"cleared": {"value": {"messages": []}}}"#)),
            .refusal(400, .badRequest),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let showMail = ControlOperation(
        method: .get,
        path: "/__mock/mail/{id}",
        id: "showMail",
        summary: "One message, decoded",
        description: "",
        parameters: [
            .path("id", .string, doc: "The message's id.", example: #""1""#),
        ],
        answers: [
            .answer(200, .json("The message.", .ref("MailMessage"))),
            .answer(404, .json("No kept message with this id.", .ref("ControlError"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    static let rawMail = ControlOperation(
        method: .get,
        path: "/__mock/mail/{id}/raw",
        id: "rawMail",
        summary: "One message's bytes as received",
        description: "Dot-unstuffed, CRLF line ends. A refused recipient has none: 404.",
        parameters: [
            .path("id", .string, doc: "The message's id.", example: #""1""#),
        ],
        answers: [
            .answer(200, .media("The message (RFC 5322).", "message/rfc822", .string)),
            .answer(404, .json("No kept message with this id.", .ref("ControlError"))),
            .refusal(401, .unauthorized),
            .refusal(403, .forbidden),
        ])

    /// What the dashboard's page, assets and data are sent with: `cache` (`NoStore` or `NoCache`),
    /// and a policy that lets the page load nothing but its own script, style sheet and data.
    private static func dashboardHeaders(cache: String) -> String {
        ##"{"Cache-Control": {"$ref": "#/components/headers/"## + cache + ##""}, "Content-Security-Policy": {"description": "The page loads "##
            + ##"its own script, style sheet and data only: no inline script or style, no other origin, no framing.", "required": true, "schema": "##
            + ##"{"type": "string", "const": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "##
            + ##"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}}, "X-Content-Type-Options": {"required": true, "schema": "##
            + ##"{"type": "string", "const": "nosniff"}}}"##
    }

    /// Every control route, in the contract's order.
    static let all: [ControlOperation] = [
        health, openapi, dashboardRedirect, dashboard, dashboardScript,
        dashboardStyle, dashboardData, mintIdentityToken, headlessAuthorize, nativeSignIn,
        forgeToken, listFaults, addFault, removeFaults, showFault,
        removeFault, clock, moveClock, listKeys, publishKey,
        rotateKeys, activateKey, retireKey, listUsers, addUser,
        reset, credentialState, accountEvent, eventFeed, notificationLog,
        clearNotifications, requestJournal, clearRequestJournal, countRequests, mailList,
        clearMail, showMail, rawMail,
    ]
}
