"""`AppleIDMock`: a running appleid-mock, driven through its control API (`/__mock/…`) with the
standard library's HTTP client. The pytest fixture, the Testcontainers module and a mock some
other tool started (`APPLEID_MOCK_URL`) all hand tests this same object."""
import json
import pathlib
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

from . import _jose

# The committed test-only developer key of the built-in scenario (Keys/AuthKey_MOCKKEY001.p8 in
# the AppleIDMock repository; the mock has its public half). A copy ships with the package so a
# client_secret needs no checkout and no binary.
BUILT_IN_KEY = pathlib.Path(__file__).with_name("AuthKey_MOCKKEY001.p8")
BUILT_IN_TEAM, BUILT_IN_KEY_ID = "MOCKTEAM01", "MOCKKEY001"
APPLE_AUDIENCE = "https://appleid.apple.com"
# Apple's limit on a client_secret's lifetime, six months (exp - iat).
MAX_SECRET_LIFETIME = 15777000


class AppleIDMockError(Exception):
    """The mock refused a request, or would not start: the message says why, in the mock's own
    words (its JSON `error` and `field`, the refusal reason its stderr and journal give, or the
    stderr of a mock that exited)."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.status, self.body = status, body


class Faults:
    """`appleid_mock.faults`: faults on Apple's routes and on notification delivery
    (`/__mock/faults`)."""

    def __init__(self, mock):
        self._mock = mock

    def add(self, **fault):
        """Installs one fault (the fields of a scenario's `faults` entry, e.g. `path="/auth/token",
        times=1, action="respond", status=503`) and answers it with its `id`."""
        return self._mock._call("POST", "/__mock/faults", fault)

    def incident(self, name, minutes=None):
        """Installs one of Apple's own incidents, the faults that reproduce it
        (`discovery-issuer-flip`, `jwks-without-signing-key`, `token-endpoint-outage`,
        `notifications-once`), for `minutes` of mock time when given; answers
        `{"incident", "faults"}` (`POST /__mock/faults {"incident": NAME, "minutes": N}`)."""
        body = {"incident": name}
        if minutes is not None:
            body["minutes"] = minutes
        return self._mock._call("POST", "/__mock/faults", body)

    def list(self):
        """The installed faults, with how often each fired."""
        return self._mock._call("GET", "/__mock/faults")["faults"]

    def clear(self, incident=None):
        """Removes every fault, or every fault of the `incident`; answers how many there were."""
        query = {"incident": incident} if incident else None
        return self._mock._call("DELETE", "/__mock/faults", query=query)["removed"]


class AppleIDMock:
    """A running appleid-mock at `url`. `scenario` (the dict it serves, when known) supplies the
    defaults: the team and key of `client_secret`, the client of `authorize_web`."""

    def __init__(self, url, *, ca=None, control_token=None, scenario=None, logs=None, timeout=30):
        self.url = url.rstrip("/")
        self.scenario = scenario
        self.faults = Faults(self)
        self._token, self._timeout, self._logs = control_token, timeout, logs
        self._context = ssl.create_default_context(cafile=str(ca)) if ca else None
        # Never through a proxy: the mock is local to the tests.
        handlers = [urllib.request.ProxyHandler({})]
        if self._context:
            handlers.append(urllib.request.HTTPSHandler(context=self._context))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self):
        return f"AppleIDMock({self.url!r})"

    # ---- Apple's side of a sign-in ----

    def client_secret(self, client_id=None, *, team_id=None, key_id=None, key=None, lifetime=3600, issued_at=None):
        """The ES256 `client_secret` your backend sends `/auth/token` as `client_id` (default: the
        team's first Services ID), signed by the team's developer key: the built-in test key
        MOCKKEY001 unless `key` names a `.p8` file (or is its PEM text)."""
        team = self._team(team_id, client_id)
        team_id = team_id or (team or {}).get("team_id") or BUILT_IN_TEAM
        key_id = key_id or ((team or {}).get("developer_keys") or [{}])[0].get("key_id") or BUILT_IN_KEY_ID
        if client_id is None:
            clients = (team or {}).get("clients") or [{"client_id": "com.example.web", "type": "services_id"}]
            client_id = next((c for c in clients if c.get("type") == "services_id"), clients[0])["client_id"]
        if key is None:
            if key_id != BUILT_IN_KEY_ID:
                raise AppleIDMockError(f"client_secret: key {key_id} of team {team_id} is not the built-in test key; "
                                       f"pass key= (the path of its .p8, or its PEM)")
            pem = BUILT_IN_KEY.read_text()
        else:
            text = str(key)
            pem = text if "-----BEGIN" in text else pathlib.Path(text).read_text()
        if not 0 < lifetime <= MAX_SECRET_LIFETIME:
            raise AppleIDMockError(f"client_secret: lifetime {lifetime} is outside 1…{MAX_SECRET_LIFETIME} s (Apple's six months)")
        try:
            scalar = _jose.p256_private_scalar(pem)
        except _jose.KeyFormatError as error:
            raise AppleIDMockError(f"client_secret: key {key if key is not None else BUILT_IN_KEY}: {error}") from None
        now = int(time.time()) if issued_at is None else int(issued_at)
        claims = {"iss": team_id, "iat": now, "exp": now + lifetime, "aud": APPLE_AUDIENCE, "sub": client_id}
        return _jose.es256_jwt({"alg": "ES256", "kid": key_id}, claims, scalar)

    def sign_in(self, user, client_id, **fields):
        """A native (iOS) sign-in: what `ASAuthorizationAppleIDCredential` hands the app (`user`,
        `identityToken`, `authorizationCode`, the first time `email` and `fullName`). `fields`:
        `nonce`, `scopes`, `hide_email`, `defect`."""
        return self._call("POST", "/__mock/sign-in", dict(fields, user=user, client_id=client_id))

    def authorize_web(self, user, client_id=None, redirect_uri=None, **parameters):
        """The web flow without a browser: the user approves (or, with `cancel=True`, cancels) at
        `/auth/authorize` and this answers how Apple would deliver the result
        (`POST /__mock/authorize`):

        - `response_mode` `query` or `fragment`: `{"method": "GET", "url", "form": {}}`, the
          redirect URI with the fields in its query or fragment;
        - `form_post`: `{"method": "POST", "url", "form"}`, the fields to post to the redirect URI;
        - `web_message` (Sign in with Apple JS's popup; the redirect URI receives nothing):
          `{"message", "method": "postMessage", "target_origin"}`, `message` the exact string the
          popup posts to `window.opener` (`JSON.stringify({method: "oauthDone", data})`, so
          `json.loads` it; `data` is `{"authorization": {"code", "id_token"?, "state"?}, "user"?}`,
          or `{"error": "user_cancelled_authorize"}` on cancel) and `target_origin` the redirect
          URI's origin, the only one it is posted to.

        `response_type` defaults to `code`, `client_id` to the scenario's first Services ID and
        `redirect_uri` to its first; `parameters` are the authorize parameters (`state`, `nonce`,
        `response_mode`, `scope`, `code_challenge`, …) and the user's choices (`hide_email`,
        `given_name`, `family_name`, `cancel`, `defect`). A refusal (an unknown `response_mode`,
        an unregistered redirect URI) raises `AppleIDMockError`, its `body["apple_error"]` the code
        Apple's authorize page would show."""
        if client_id is None or redirect_uri is None:
            client = self._services_client(client_id)
            client_id = client_id or client["client_id"]
            redirect_uri = redirect_uri or (client.get("redirect_uris") or [None])[0]
        body = dict({"response_type": "code"}, **parameters, user=user, client_id=client_id)
        if redirect_uri is not None:
            body["redirect_uri"] = redirect_uri
        return self._call("POST", "/__mock/authorize", body)

    def token(self, user="alice", client_id=None, *, defect=None, nonce=None, claims=None, **fields):
        """A forged id_token for `user`, genuine or with one `defect` (`expired`, `wrong-audience`,
        `alg-none`, …), changing nothing in the mock; `fields` may ask for a notification JWT
        (`kind="notification"`, `type=`), and then the whole answer is returned."""
        body = dict(fields, user=user)
        for name, value in (("client_id", client_id), ("defect", defect), ("nonce", nonce), ("claims", claims)):
            if value is not None:
                body[name] = value
        answer = self._call("POST", "/__mock/tokens", body)
        return answer["id_token"] if "id_token" in answer and not fields else answer

    # ---- the world around it ----

    def advance_clock(self, seconds):
        """Moves the mock clock on by `seconds`; answers the clock."""
        return self._call("POST", "/__mock/clock", {"advance": seconds})

    def rotate_keys(self):
        """One step of Apple's key rotation: a fresh key signs, the previous ones stay published."""
        return self._call("POST", "/__mock/keys/rotate", {})

    def fire_event(self, type, user, client_id):
        """A user's action at Apple (`consent-revoked`, `account-delete`, `email-disabled`,
        `email-enabled`): the state changes and the app group's signed notification is queued."""
        return self._call("POST", "/__mock/events", {"type": type, "user": user, "client_id": client_id})

    def change_password(self, user):
        """The user changed their Apple Account password: their refresh tokens for every app
        answer `invalid_grant`, no notification is sent, and the credential state stays
        `authorized` (Apple does not document it)."""
        return self._call("POST", "/__mock/events", {"type": "password-changed", "user": user})

    def requests(self, **filters):
        """The request journal, oldest first: what the mock received and answered, with the reason
        for each refusal. Filters: `method`, `path` (or a route template), `client_id`,
        `grant_type`, `status` (`400`, `4xx`), `control`, `after`, `limit`, `wait`."""
        query = {name: str(value).lower() if isinstance(value, bool) else value for name, value in filters.items() if value is not None}
        return self._call("GET", "/__mock/requests", query=query)["requests"]

    def reset(self):
        """Back to the scenario's start: users, consents, codes, transfers, keys and clock."""
        return self._call("POST", "/__mock/reset", {})

    def health(self):
        """`{"active_kid", "issuer", "status"}`."""
        return self._call("GET", "/__mock/health")

    def wait_until_healthy(self, timeout=30, alive=None):
        """Asks `/__mock/health` until it answers (every 50 ms, at most `timeout` s); `alive`, when
        given, is asked in between and its error ends the wait early."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.health()
            except AppleIDMockError as error:
                last = error
            if alive:
                alive()
            if time.monotonic() >= deadline:
                raise AppleIDMockError(f"{self.url} did not answer /__mock/health within {timeout} s: {last}")
            time.sleep(0.05)

    # ---- reading what went wrong ----

    def journal_mark(self):
        """The id of the newest journal entry (0 with the journal off): later entries come after it."""
        try:
            return self._call("GET", "/__mock/requests", query={"limit": 1, "after": 0, "control": "false"}).get("newest", 0)
        except AppleIDMockError:
            return 0

    def refusals(self, after=0):
        """The requests to Apple's routes the mock refused after journal id `after`, one line each
        with the reason its stderr gave: `POST /auth/token 400 invalid_client — client_secret …`."""
        try:
            entries = self.requests(after=after, control=False, status="4xx", limit=1000)
        except AppleIDMockError as error:
            return [f"(the journal is unavailable: {error})"]
        return [f"{e.get('method')} {e.get('path')} {e.get('status')} {e.get('error') or ''} — {e.get('reason') or 'no reason given'}".replace("  ", " ")
                for e in entries]

    def logs(self):
        """What the mock wrote to stderr so far, when this object knows (a process or container it
        started), else an empty list."""
        return list(self._logs()) if self._logs else []

    # ---- plumbing ----

    def _team(self, team_id, client_id):
        teams = (self.scenario or {}).get("teams") or []
        for team in teams:
            if team_id and team.get("team_id") == team_id:
                return team
            if not team_id and client_id and any(c.get("client_id") == client_id for c in team.get("clients") or []):
                return team
        return None if team_id else (teams[0] if teams else None)

    def _services_client(self, client_id):
        teams = (self.scenario or {}).get("teams") or []
        clients = [c for team in teams for c in team.get("clients") or []]
        if client_id:
            return next((c for c in clients if c.get("client_id") == client_id), {"client_id": client_id})
        found = next((c for c in clients if c.get("type") == "services_id"), None)
        if found is None:
            raise AppleIDMockError("authorize_web: the scenario has no Services ID; pass client_id= and redirect_uri=")
        return found

    def _call(self, method, path, body=None, query=None):
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=self._timeout + float((query or {}).get("wait", 0))) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                detail = json.loads(text)
            except ValueError:
                detail = None
            if isinstance(detail, dict) and "error" in detail:
                said = detail["error"] + (f" (field {detail['field']})" if detail.get("field") else "")
            else:
                said = text[:500] or error.reason
            raise AppleIDMockError(f"{method} {path} answered {error.code}: {said}", status=error.code, body=detail if detail is not None else text) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise AppleIDMockError(f"{method} {url}: {reason}") from None
        return json.loads(text) if text else {}
