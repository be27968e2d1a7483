"""Account events end to end: a backend's notification endpoint written with Python's standard
library receives Apple's signed server-to-server notification, verifies it with PyJWT against
/auth/keys as a careful backend does, and the event's effect shows at Apple's endpoints."""
import datetime
import http.server
import inspect
import json
import queue
import socket
import ssl
import threading

import jwt
import pytest
import requests

from conftest import MockProcess, hidden_fields, run_cli

ISSUER = "https://appleid.apple.com"
REDIRECT_URI = "http://localhost:3000/callback"


class Receiver:
    """A backend's notification endpoint: answers each POST with the next scripted status (the
    last one for ever after; "hang" never answers) and queues each request it read."""

    def __init__(self, statuses=(200,), tls=None):
        self.statuses = list(statuses)
        self.requests = queue.Queue()
        self.release = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.put((self.path, self.headers.get("Content-Type"), body))
                status = receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                if status == "hang":
                    receiver.release.wait()
                    return
                if status in ("close-delimited", "cut-short"):
                    # The body ends with the connection; Python's TLS server closes without
                    # close_notify, as many servers do. "cut-short" promises more than it sends.
                    length = b"" if status == "close-delimited" else b"Content-Length: 100\r\n"
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n" + length + b"Connection: close\r\n\r\nthanks")
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        scheme = "http"
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}/apple/notifications"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self):
        """The next request: path, content type and body (the mock retries within seconds)."""
        return self.requests.get(timeout=30)

    def stop(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def scenario_file(tmp_path, receiver_url, **compatibility):
    printed = run_cli("scenario", "print")
    assert printed.returncode == 0, printed.stderr
    scenario = json.loads(printed.stdout)
    scenario["teams"][0]["notification_url"] = receiver_url
    scenario["compatibility"].update(compatibility)
    # Frozen two hours back: a timeline event an hour in still carries an iat in the past.
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) - datetime.timedelta(hours=2)
    scenario["clock"] = {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ"), "frozen": True}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return scenario, path


@pytest.fixture
def started(tmp_path):
    """Starts a receiver and a mock whose app group notifies it; stops both afterwards."""
    running = []

    def start(statuses=(200,), tls=None, mock_args=(), timeline=(), **compatibility):
        receiver = Receiver(statuses, tls)
        running.append(receiver)
        scenario, path = scenario_file(tmp_path, receiver.url, **compatibility)
        if timeline:
            scenario["events"] = list(timeline)
            path.write_text(json.dumps(scenario))
        mock = MockProcess("--scenario", str(path), *mock_args)
        running.append(mock)
        return mock, receiver

    yield start
    for item in reversed(running):
        item.stop()


def jwks_client(mock):
    cooldown = {"cooldown_duration": 0} if "cooldown_duration" in inspect.signature(jwt.PyJWKClient).parameters else {}
    return jwt.PyJWKClient(f"{mock.url}/auth/keys", **cooldown)


def verified(mock, received):
    """What a careful backend does with a notification: JSON body, kid looked up at /auth/keys,
    RS256 only, iss and aud checked, exp required and checked; then `events` decoded."""
    path, content_type, body = received
    assert path == "/apple/notifications"
    assert content_type == "application/json"
    document = json.loads(body)
    assert list(document) == ["payload"]
    token = document["payload"]
    key = jwks_client(mock).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience="com.example.app", issuer=ISSUER,
                        options={"require": ["iss", "aud", "iat", "exp", "jti", "events"]})
    assert jwt.get_unverified_header(token) == {"kid": key.key_id, "alg": "RS256"}
    assert claims["exp"] == claims["iat"] + 86400
    assert isinstance(claims["events"], str), "a JSON-encoded string, as real payloads carry"
    return token, claims, json.loads(claims["events"])


def event(mock, type, user, client="com.example.app"):
    return requests.post(f"{mock.url}/__mock/events", json={"type": type, "user": user, "client_id": client})


def settled(mock, after=0):
    """The log's records after `after`, once one has settled (long poll, no sleeping)."""
    response = requests.get(f"{mock.url}/__mock/notifications", params={"after": after, "wait": 30})
    assert response.status_code == 200, response.text
    return response.json()["notifications"]


def native_sign_in(mock, user, **extra):
    """An iOS app's sign-in, its code redeemed by the backend: the id_token's sub and the refresh token."""
    credential = requests.post(f"{mock.url}/__mock/sign-in", json={"user": user, "client_id": "com.example.app", **extra})
    assert credential.status_code == 200, credential.text
    answer = token(mock, grant_type="authorization_code", code=credential.json()["authorizationCode"])
    assert answer.status_code == 200, answer.text
    return jwt.decode(answer.json()["id_token"], options={"verify_signature": False})["sub"], answer.json()["refresh_token"]


def client_secret(mock, client="com.example.app"):
    """A client_secret issued at the mock clock's now (the scenario's clock stands two hours back)."""
    epoch = requests.get(f"{mock.url}/__mock/clock").json()["epoch"]
    made = run_cli("client-secret", "--client", client, "--issued-at", str(epoch))
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def token(mock, client="com.example.app", **fields):
    return requests.post(f"{mock.url}/auth/token", data={"client_id": client, "client_secret": client_secret(mock, client), **fields})


def refresh(mock, refresh_token, client="com.example.app"):
    return token(mock, client, grant_type="refresh_token", refresh_token=refresh_token)


def web_sign_in(mock, user="alice"):
    """Apple's web flow as a browser runs it: the consent page, Continue, and the fields the
    form_post page posts to the callback (or the refusal page)."""
    browser = requests.Session()
    url = f"{mock.url}/auth/authorize"
    query = {"client_id": "com.example.web", "redirect_uri": REDIRECT_URI, "response_type": "code",
             "response_mode": "form_post", "scope": "name email", "state": "s1"}
    consent = browser.get(url, params=query)
    assert consent.status_code == 200, consent.text
    form = hidden_fields(consent.text)
    form.update({"mock_user": user, "mock_action": "continue"})
    return browser.post(url, data=form)


def posted_fields(page):
    assert page.status_code == 200, page.text
    assert f'action="{REDIRECT_URI}"' in page.text
    return hidden_fields(page.text)


def test_consent_revoked_reaches_the_backend_ends_refresh_and_makes_the_next_authorization_a_first(started):
    mock, receiver = started()
    first = posted_fields(web_sign_in(mock))
    assert json.loads(first["user"])["email"] == "alice@example.com"
    assert "user" not in posted_fields(web_sign_in(mock)), "the twin: a later authorization carries no user JSON"
    exchanged = token(mock, "com.example.web", grant_type="authorization_code", code=first["code"], redirect_uri=REDIRECT_URI)
    assert exchanged.status_code == 200, exchanged.text
    sub = jwt.decode(exchanged.json()["id_token"], options={"verify_signature": False})["sub"]
    assert refresh(mock, exchanged.json()["refresh_token"], "com.example.web").status_code == 200

    answered = event(mock, "consent-revoked", "alice", "com.example.web")
    assert answered.status_code == 202
    assert answered.json() == {"notification": 1, "notifications": [1], "type": "consent-revoked", "user": "alice"}
    notification, claims, events = verified(mock, receiver.next())
    assert claims["aud"] == "com.example.app", "the app group's primary App ID, though the event named the Services ID"
    assert set(events) == {"type", "sub", "event_time"}
    assert events["type"] == "consent-revoked" and events["sub"] == sub
    assert events["event_time"] == claims["iat"] * 1000, "milliseconds on the mock clock"

    refused = refresh(mock, exchanged.json()["refresh_token"], "com.example.web")
    assert (refused.status_code, refused.json()) == (400, {"error": "invalid_request"})
    again = posted_fields(web_sign_in(mock))
    assert json.loads(again["user"]) == {"name": {"firstName": "Alice", "lastName": "Appleseed"}, "email": "alice@example.com"}

    [record] = settled(mock)
    assert record["outcome"] == "delivered" and record["jwt"] == notification
    assert [attempt["status"] for attempt in record["attempts"]] == [200]
    assert record["claims"] == claims and record["event"] == events


@pytest.mark.parametrize("name", ["account-deleted", "account-delete"])
def test_account_deletion_kills_tokens_refuses_sign_in_and_reads_revoked(started, name):
    mock, receiver = started(account_deletion_event_type=name)
    sub, refresh_token = native_sign_in(mock, "alice")
    bob_sub, bob_refresh = native_sign_in(mock, "bob")
    answered = event(mock, name, sub)
    assert answered.status_code == 202, answered.text
    assert answered.json() == {"notification": 1, "notifications": [1], "type": name, "user": sub}
    _, _, events = verified(mock, receiver.next())
    assert events["type"] == name and events["sub"] == sub

    refused = refresh(mock, refresh_token)
    # TN3107: a user who took the authorization back reads invalid_request (knob revoked_consent_refresh_error).
    assert (refused.status_code, refused.json()) == (400, {"error": "invalid_request"})
    page = web_sign_in(mock, "alice")
    assert page.status_code == 400
    assert "the Apple Account of &quot;alice&quot; was deleted" in page.text or 'the Apple Account of "alice" was deleted' in page.text
    again = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "alice", "client_id": "com.example.app"})
    assert (again.status_code, again.json()) == (400, {"error": "the Apple Account of \"alice\" was deleted", "field": "user"})
    state = requests.get(f"{mock.url}/__mock/credential-state", params={"user": "alice", "client_id": "com.example.app"})
    assert state.json() == {"state": "revoked"}
    twice = event(mock, name, "alice")
    assert (twice.status_code, twice.json()) == (409, {"error": "the Apple Account of \"alice\" was deleted", "field": "user"})

    # The twin: bob's account lives on.
    assert refresh(mock, bob_refresh).status_code == 200
    bob = requests.get(f"{mock.url}/__mock/credential-state", params={"user": bob_sub, "client_id": "com.example.app"})
    assert bob.json() == {"state": "authorized"}


def test_email_disabled_and_enabled_carry_the_relay_address_and_toggle_forwarding(started):
    mock, receiver = started()
    credential = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "bob", "client_id": "com.example.app"}).json()
    relay = credential["email"]
    assert relay.endswith("@privaterelay.appleid.com")
    native_sign_in(mock, "alice")
    # The twin first: alice shares her real address, so there is nothing to forward.
    refused = event(mock, "email-disabled", "alice")
    assert (refused.status_code, refused.json()) == (
        409, {"error": "\"alice\" does not use a relay address with this app group", "field": "user"})

    for type, forwarding in [("email-disabled", False), ("email-enabled", True)]:
        assert event(mock, type, "bob").status_code == 202
        _, _, events = verified(mock, receiver.next())
        assert events == {"type": type, "sub": credential["user"], "event_time": events["event_time"],
                          "email": relay, "is_private_email": "true"}
        users = {user["id"]: user for user in requests.get(f"{mock.url}/__mock/users").json()["users"]}
        assert [team["relay_forwarding"] for team in users["bob"]["teams"]] == [forwarding], users["bob"]
    # Forwarding is not sign-in: bob still signs in.
    assert native_sign_in(mock, "bob")[0] == credential["user"]


@pytest.mark.parametrize("notifies", [True, False])
def test_the_apps_own_revoke_notifies_only_when_the_knob_is_on(started, notifies):
    mock, receiver = started(revoke_notifies=notifies)
    _, refresh_token = native_sign_in(mock, "alice")
    native_sign_in(mock, "bob")
    revoked = requests.post(f"{mock.url}/auth/revoke", data={"client_id": "com.example.app", "client_secret": client_secret(mock),
                                                             "token": refresh_token, "token_type_hint": "refresh_token"})
    assert revoked.status_code == 200
    # A later event for bob: the log holds a notification for alice before it only if revoke sent one.
    answered = event(mock, "consent-revoked", "bob")
    assert answered.json()["notification"] == (2 if notifies else 1)
    assert verified(mock, receiver.next())[2]["type"] == "consent-revoked"
    log = requests.get(f"{mock.url}/__mock/notifications").json()["notifications"]
    assert [(record["user"], record["type"]) for record in log] == (
        [("alice", "consent-revoked")] if notifies else []) + [("bob", "consent-revoked")]


def test_a_receiver_answering_500_twice_then_200_gets_three_attempts_of_one_jwt(started):
    mock, receiver = started(statuses=[500, 500, 200], notification_retry_delays=[0, 0])
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    bodies = [receiver.next()[2] for _ in range(3)]
    assert len(set(bodies)) == 1, "the same signed JWT every attempt"
    [record] = settled(mock)
    assert record["outcome"] == "delivered"
    assert [(attempt["status"], attempt["error"]) for attempt in record["attempts"]] == [(500, None), (500, None), (200, None)]


def test_a_receiver_that_keeps_failing_exhausts_the_schedule(started):
    mock, receiver = started(statuses=[503], notification_retry_delays=[0, 0])
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    [record] = settled(mock)
    assert record["outcome"] == "failed"
    assert [attempt["status"] for attempt in record["attempts"]] == [503, 503, 503]


def test_a_receiver_that_never_answers_times_out_every_attempt_and_costs_other_traffic_nothing(started):
    mock, receiver = started(statuses=["hang"], notification_retry_delays=[0, 0], mock_args=("--notification-timeout", "1"))
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    receiver.next()
    # While the receiver holds the attempt, Apple's endpoints answer.
    assert requests.get(f"{mock.url}/auth/keys").status_code == 200
    [record] = settled(mock)
    assert record["outcome"] == "failed"
    assert len(record["attempts"]) == 3
    for attempt in record["attempts"]:
        assert attempt["status"] is None and "timed out" in attempt["error"], attempt


def test_an_unreachable_receiver_is_refused_every_attempt(started, tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    _, path = scenario_file(tmp_path, f"http://127.0.0.1:{port}/apple", notification_retry_delays=[0])
    mock = MockProcess("--scenario", str(path))
    try:
        native_sign_in(mock, "alice")
        assert event(mock, "consent-revoked", "alice").status_code == 202
        [record] = settled(mock)
        assert record["outcome"] == "failed"
        assert [attempt["status"] for attempt in record["attempts"]] == [None, None]
        assert all("refused" in attempt["error"] for attempt in record["attempts"]), record["attempts"]
    finally:
        mock.stop()


def test_mock_stopped_with_a_stuck_delivery_lists_it_as_undelivered(tmp_path):
    receiver = Receiver(["hang"])
    try:
        _, path = scenario_file(tmp_path, receiver.url, notification_retry_delays=[0])
        mock = MockProcess("--scenario", str(path), "--notification-timeout", "30")
        native_sign_in(mock, "alice")
        assert event(mock, "consent-revoked", "alice").status_code == 202
        receiver.next()
        mock.process.terminate()
        assert mock.process.wait(timeout=30) == 0
        stderr = mock.process.stderr.read()
        assert "undelivered" in stderr and "consent-revoked" in stderr and receiver.url in stderr, stderr
    finally:
        receiver.stop()


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory):
    """A test CA and a certificate it issued for 127.0.0.1, made with `cryptography`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    directory = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AppleIDMock notification test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    (directory / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "cert.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    return directory, context


def test_an_https_receiver_is_reached_when_its_ca_is_given(started, test_ca):
    directory, context = test_ca
    mock, receiver = started(tls=context, mock_args=("--notification-ca", str(directory / "ca.pem")))
    assert receiver.url.startswith("https://")
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    _, _, events = verified(mock, receiver.next())
    assert events["type"] == "consent-revoked"
    [record] = settled(mock)
    assert record["outcome"] == "delivered" and record["attempts"][0]["status"] == 200


@pytest.mark.parametrize("answer, outcome", [("close-delimited", "delivered"), ("cut-short", "failed")])
def test_an_https_answer_ended_by_a_close_without_close_notify(started, test_ca, answer, outcome):
    directory, context = test_ca
    mock, receiver = started(statuses=(answer,), tls=context, notification_retry_delays=[],
                             mock_args=("--notification-ca", str(directory / "ca.pem")))
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    receiver.next()
    [record] = settled(mock)
    assert record["outcome"] == outcome, record
    [attempt] = record["attempts"]
    if outcome == "delivered":
        assert attempt["status"] == 200, attempt
    else:
        assert attempt["status"] is None and attempt["error"].endswith("closed after 6 of 100 body bytes"), attempt


def test_an_https_receiver_fails_with_a_certificate_error_without_its_ca(started, test_ca):
    _, context = test_ca
    mock, receiver = started(tls=context, notification_retry_delays=[])
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    [record] = settled(mock)
    assert record["outcome"] == "failed", record
    [attempt] = record["attempts"]
    assert attempt["status"] is None and "certificate" in attempt["error"], attempt
    assert receiver.requests.empty(), "nothing is sent over an unverified connection"


def test_timeline_event_is_delivered_when_the_clock_passes_its_time(started):
    timeline = [{"at": 3600, "type": "consent-revoked", "user": "alice", "client_id": "com.example.app"}]
    mock, receiver = started(timeline=timeline)
    start = requests.get(f"{mock.url}/__mock/clock").json()
    assert start["frozen"] is True
    _, refresh_token = native_sign_in(mock, "alice")
    native_sign_in(mock, "bob")
    assert requests.post(f"{mock.url}/__mock/clock", json={"advance": 3599}).status_code == 200
    # The twin: one second early, nothing fired. A later event shows what the outbox held.
    assert event(mock, "email-disabled", "bob").status_code == 202
    _, _, events = verified(mock, receiver.next())
    assert events["type"] == "email-disabled"
    assert refresh(mock, refresh_token).status_code == 200

    assert requests.post(f"{mock.url}/__mock/clock", json={"advance": 1}).status_code == 200
    _, claims, events = verified(mock, receiver.next())
    assert events["type"] == "consent-revoked"
    assert claims["iat"] == start["epoch"] + 3600
    refused = refresh(mock, refresh_token)
    assert (refused.status_code, refused.json()) == (400, {"error": "invalid_request"})
    log = requests.get(f"{mock.url}/__mock/notifications").json()["notifications"]
    assert [record["type"] for record in log] == ["email-disabled", "consent-revoked"]


def test_events_object_knob_sends_the_event_as_an_object(started):
    mock, receiver = started(events_claim_format="object")
    native_sign_in(mock, "alice")
    assert event(mock, "consent-revoked", "alice").status_code == 202
    _, _, body = receiver.next()
    token = json.loads(body)["payload"]
    key = jwks_client(mock).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience="com.example.app", issuer=ISSUER)
    assert isinstance(claims["events"], dict) and claims["events"]["type"] == "consent-revoked"


@pytest.mark.parametrize("body, status, answer", [
    ({"type": "account-gone", "user": "alice", "client_id": "com.example.app"}, 400,
     {"error": "expected \"consent-revoked\", \"account-delete\", \"account-deleted\", \"email-disabled\", \"email-enabled\" or \"password-changed\"",
      "field": "type"}),
    ({"type": "consent-revoked", "user": "mallory", "client_id": "com.example.app"}, 404,
     {"error": "no user \"mallory\"", "field": "user"}),
    ({"type": "consent-revoked", "user": "alice", "client_id": "com.nope"}, 404,
     {"error": "no client \"com.nope\" in the scenario", "field": "client_id"}),
    ({"type": "consent-revoked", "user": "bob", "client_id": "com.example.app"}, 409,
     {"error": "\"bob\" has not signed in to this app group", "field": "user"}),
    ({"type": "consent-revoked", "user": "alice"}, 400, {"error": "missing required field", "field": "client_id"}),
    ({"type": "consent-revoked", "user": "alice", "client_id": "com.example.app", "when": 1}, 400,
     {"error": "unknown field (expected one of: type, user, client_id)", "field": "when"}),
])
def test_events_refuse_bad_input_naming_the_field(started, body, status, answer):
    mock, receiver = started()
    native_sign_in(mock, "alice")
    refused = requests.post(f"{mock.url}/__mock/events", json=body)
    assert (refused.status_code, refused.json()) == (status, answer)
    assert requests.get(f"{mock.url}/__mock/notifications").json() == {"notifications": []}
    # The twin: the well-formed event is accepted.
    assert event(mock, "consent-revoked", "alice").status_code == 202


def test_cli_event_fires_an_event_and_prints_the_answer(started):
    mock, receiver = started()
    native_sign_in(mock, "alice")
    fired = run_cli("event", "consent-revoked", "--user", "alice", "--client", "com.example.app", "--server", mock.url)
    assert fired.returncode == 0, fired.stderr
    assert json.loads(fired.stdout) == {"notification": 1, "notifications": [1], "type": "consent-revoked", "user": "alice"}
    assert verified(mock, receiver.next())[2]["type"] == "consent-revoked"
    unknown = run_cli("event", "account-gone", "--user", "alice", "--client", "com.example.app", "--server", mock.url)
    assert unknown.returncode == 2 and "account-gone" in unknown.stderr, unknown.stderr


class RawReceiver:
    """A receiver on a bare socket that misbehaves after reading each request: `huge` answers 200
    with a 10 MB body, `reset` drops the connection with a TCP reset."""

    def __init__(self, behaviour):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/apple"
        self.behaviour = behaviour
        self.requests = queue.Queue()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection):
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.requests.put(data)
            try:
                if self.behaviour == "huge":
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n" + b"x" * 10485760)
                else:
                    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass

    def stop(self):
        self.listener.close()


@pytest.mark.parametrize("behaviour, outcome, statuses", [("huge", "delivered", [200]), ("reset", "failed", [None, None])])
def test_a_misbehaving_receiver_costs_the_mock_only_its_own_attempts(tmp_path, behaviour, outcome, statuses):
    receiver = RawReceiver(behaviour)
    _, path = scenario_file(tmp_path, receiver.url, notification_retry_delays=[0])
    mock = MockProcess("--scenario", str(path))
    try:
        native_sign_in(mock, "alice")
        assert event(mock, "consent-revoked", "alice").status_code == 202
        [record] = settled(mock)
        assert record["outcome"] == outcome, record["attempts"]
        assert [attempt["status"] for attempt in record["attempts"]] == statuses
        if behaviour == "reset":
            assert all(attempt["error"] for attempt in record["attempts"])
        # The mock goes on answering, its memory not holding the 10 MB answer.
        assert requests.get(f"{mock.url}/auth/keys").status_code == 200
        resident = int(next(line for line in open(f"/proc/{mock.process.pid}/status") if line.startswith("VmRSS")).split()[1])
        assert resident < 100 * 1024, f"{resident} KiB resident"
    finally:
        mock.stop()
        receiver.stop()
