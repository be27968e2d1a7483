"""A receiver for Apple's server-to-server notifications, wired into the scenario the plugin
serves: it verifies each one as a careful backend would and hands it to the test. Verified means:
RS256 under a key `/auth/keys` publishes (fetched again for an unknown kid), `iss` the mock's
issuer, `aud` a client of the scenario, `iat` not after the mock's clock, and an `events` claim
(a JSON string, as Apple sends it, or an object) with a `type`. It answers 200, or 400 with the
reason (the mock's delivery log then shows the attempt and retries it)."""
import http.server
import json
import threading
import time

from . import _jose
from .mock import AppleIDMockError


class NotificationReceiver:
    """An HTTP server on `host` (default 127.0.0.1, port 0: a free one) taking `POST`s of
    `{"payload": JWT}` at any path."""

    def __init__(self, host="127.0.0.1", port=0, advertised_host=None):
        self._records = []
        self._changed = threading.Condition()
        self._mock = None
        self._keys = {}
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                verdict = receiver._receive(self.rfile.read(min(length, 1 << 20)))
                body = json.dumps({"ok": True} if "error" not in verdict else {"error": verdict["error"]}).encode()
                self.send_response(200 if "error" not in verdict else 400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="apple notifications", daemon=True)
        self._thread.start()
        self.url = f"http://{advertised_host or host}:{self._server.server_address[1]}/apple/notifications"

    def attach(self, mock):
        """Verify against `mock` (its keys, issuer, clock and scenario) from now on."""
        self._mock = mock

    def stop(self):
        """Stops serving."""
        self._server.shutdown()
        self._server.server_close()

    def count(self):
        """How many notifications (verified or not) arrived so far."""
        with self._changed:
            return len(self._records)

    def wait_for(self, index, timeout):
        """The record at `index`, waiting up to `timeout` s for it to arrive."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self._records) <= index:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
            return self._records[index]

    def _receive(self, body):
        try:
            record = self._verify(body)
        except (ValueError, KeyError, TypeError, AppleIDMockError) as error:
            record = {"error": str(error), "body": body.decode(errors="replace")[:2000]}
        with self._changed:
            self._records.append(record)
            self._changed.notify_all()
        return record

    def _verify(self, body):
        token = json.loads(body)["payload"]
        header, claims = _jose.unverified(token)
        if header.get("alg") != "RS256":
            raise ValueError(f"alg is {header.get('alg')!r}, not RS256")
        mock = self._mock
        if mock is None:
            raise ValueError("no mock attached to verify against")
        kid = header.get("kid")
        if kid not in self._keys:
            self._keys = {key["kid"]: key for key in mock._call("GET", "/auth/keys")["keys"]}
        if kid not in self._keys:
            raise ValueError(f"kid {kid!r} is not published at /auth/keys")
        if not _jose.rs256_valid(token, self._keys[kid]):
            raise ValueError(f"the RS256 signature does not verify under {kid}")
        issuer = mock.health()["issuer"]
        if claims.get("iss") != issuer:
            raise ValueError(f"iss is {claims.get('iss')!r}, not {issuer!r}")
        clients = {c.get("client_id") for team in (mock.scenario or {}).get("teams") or [] for c in team.get("clients") or []}
        if clients and claims.get("aud") not in clients:
            raise ValueError(f"aud {claims.get('aud')!r} is none of the scenario's clients")
        now = mock._call("GET", "/__mock/clock")["epoch"]
        if not isinstance(claims.get("iat"), int) or claims["iat"] > now + 60:
            raise ValueError(f"iat {claims.get('iat')!r} is after the mock's clock ({now})")
        events = claims.get("events")
        events = json.loads(events) if isinstance(events, str) else events
        if not isinstance(events, dict) or "type" not in events:
            raise ValueError(f"the events claim {claims.get('events')!r} has no type")
        return {"type": events["type"], "sub": events.get("sub"), "events": events, "claims": claims, "kid": kid, "token": token}


class AppleNotifications:
    """What a test sees of the receiver: the notifications that arrive from the moment the
    fixture was set up, in order."""

    def __init__(self, receiver):
        self._receiver = receiver
        self._start = self._next = receiver.count()
        self._claim = threading.Lock()

    @property
    def url(self):
        """Where the scenario sends notifications."""
        return self._receiver.url

    def next(self, timeout=30):
        """The next verified notification, `{"type", "sub", "events", "claims", "kid", "token"}`,
        waiting up to `timeout` s; a notification that failed verification raises, saying why."""
        # The place is taken before the wait, so calls from two threads get one notification each;
        # a call that times out gives it back when no later call took the next one.
        with self._claim:
            index = self._next
            self._next += 1
        record = self._receiver.wait_for(index, timeout)
        if record is None:
            with self._claim:
                if self._next == index + 1:
                    self._next = index
            raise AppleIDMockError(f"no notification arrived at {self.url} within {timeout} s "
                                   f"(the mock's delivery log, GET /__mock/notifications, says where it went)")
        if "error" in record:
            raise AppleIDMockError(f"a notification failed verification: {record['error']}")
        return record

    def received(self):
        """How many arrived since the fixture was set up."""
        return self._receiver.count() - self._start
