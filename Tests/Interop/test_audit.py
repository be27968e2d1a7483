"""`appleid-mock audit` against backends written with PyJWT and requests, native and web: a careful
one, which passes every check, and a careless twin (no audience check, `alg: none` accepted, the
authorization code never exchanged), whose failures the audit names exactly, exiting 1. (The
example backend, Examples/python-backend, is audited by its own e2e suite.)"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
import requests

from conftest import MockProcess, answer_json, client_secret, run_cli

APP_ID = "com.example.app"
WEB_ID = "com.example.web"
ISSUER = "https://appleid.apple.com"
CARELESS_FAILURES = ["id_token: alg-none", "id_token: wrong-audience", "the authorization code is exchanged at /auth/token"]


def key_client(url):
    """The key set cached (and refetched for an unknown kid), not each key forever: cache_keys=True
    would keep a retired key verifying. No cooldown between refetches where this PyJWT has one
    (2.1x waits 30 s by default, refusing a new kid that soon after its last fetch)."""
    try:
        return jwt.PyJWKClient(url, cache_keys=False, cache_jwk_set=True, lifespan=300, cooldown_duration=0)
    except TypeError:
        return jwt.PyJWKClient(url, cache_keys=False, cache_jwk_set=True, lifespan=300)


def backend(mock_url, careless):
    """A native backend's POST /native, on an ephemeral port; returns (server, url)."""
    keys = key_client(f"{mock_url}/auth/keys")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            answer_json(self, body, status)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            token = body["identityToken"]
            try:
                if careless and jwt.get_unverified_header(token).get("alg") == "none":
                    claims = jwt.decode(token, options={"verify_signature": False})
                else:
                    key = keys.get_signing_key_from_jwt(token).key
                    claims = jwt.decode(token, key, algorithms=["RS256"], issuer=ISSUER,
                                        audience=None if careless else APP_ID,
                                        options={"verify_aud": not careless, "require": ["exp", "iat", "sub"]})
            except (jwt.InvalidTokenError, jwt.PyJWKClientError) as error:
                return self.answer(401, {"error": str(error)})
            # Apple's identity tokens live ten minutes: an older one is replayed, whatever its exp says.
            if time.time() - claims["iat"] > 600:
                return self.answer(401, {"error": "identity token issued too long ago"})
            if not careless:
                exchanged = requests.post(f"{mock_url}/auth/token", timeout=10, data={
                    "client_id": APP_ID, "client_secret": client_secret(APP_ID),
                    "grant_type": "authorization_code", "code": body["authorizationCode"]})
                if exchanged.status_code != 200:
                    return self.answer(400, exchanged.json())
            self.answer(200, {"sub": claims.get("sub")})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/native"


def audit(mock_url, native_url, *extra):
    result = run_cli("audit", "--server", mock_url, "--client-id", APP_ID, "--native", native_url, "--json", *extra)
    return result.returncode, json.loads(result.stdout) if result.stdout else None, result.stderr


@pytest.fixture
def careful(mock):
    server, url = backend(mock.url, careless=False)
    yield url
    server.shutdown()


@pytest.fixture
def careless(mock):
    server, url = backend(mock.url, careless=True)
    yield url
    server.shutdown()


def test_a_careful_backend_passes_every_check(mock, careful):
    status, report, stderr = audit(mock.url, careful)
    assert [row for row in report["checks"] if row["verdict"] != "ok"] == [], stderr
    assert status == 0, stderr
    assert not report["failed"]
    verdicts = {row["check"]: row["verdict"] for row in report["checks"]}
    assert verdicts["a genuine sign-in"] == "ok"
    assert verdicts["the authorization code is exchanged at /auth/token"] == "ok"
    assert verdicts["after a key rotation"] == "ok"
    assert all(verdict == "ok" for verdict in verdicts.values()), verdicts


def test_a_careless_twin_is_named_for_exactly_what_it_gets_wrong(mock, careless):
    status, report, stderr = audit(mock.url, careless)
    assert status == 1, (stderr, report)
    failed = sorted(row["check"] for row in report["checks"] if row["verdict"] == "FAIL")
    assert failed == CARELESS_FAILURES, report
    exchange = next(row for row in report["checks"] if row["check"].startswith("the authorization code"))
    assert exchange["seen"] == "never exchanged"
    # Apple's 503 cannot reach a backend that never calls Apple: not judged.
    assert {row["check"]: row["verdict"] for row in report["checks"]}["/auth/token answers 503"] == "skipped"


def test_a_backend_that_refuses_everyone_cannot_be_judged(mock, careful):
    status, report, _ = audit(mock.url, careful, "--accepted", "/never-in-the-body/")
    assert status == 1
    assert [row["check"] for row in report["checks"]] == ["a genuine sign-in"]
    assert report["stopped"].startswith("the backend refused a genuine sign-in")


@pytest.mark.parametrize("arguments, message", [
    (["--client-id", APP_ID], "--native URL or --web LOGIN_URL is required"),
    (["--client-id", APP_ID, "--native", "http://127.0.0.1:9/n", "--web", "http://127.0.0.1:9/"], "--native and --web exclude each other"),
    (["--client-id", WEB_ID, "--web", "localhost:3000/login"], "--web expects an absolute http(s) URL"),
    (["--client-id", WEB_ID, "--web", "http://127.0.0.1:9/", "--body", "{{user}}"], "--body is for --native"),
    (["--client-id", APP_ID, "--native", "ftp://x/native"], "--native expects an absolute http(s) URL"),
    (["--native", "http://127.0.0.1:9/native"], "--client-id is required"),
    (["--client-id", APP_ID, "--native", "http://127.0.0.1:9/native", "--body", "{\"token\": \"x\"}"], "--body has no placeholder"),
    (["--client-id", APP_ID, "--native", "http://127.0.0.1:9/native", "--accepted", "2x"], "--accepted expects"),
    (["--client-id", APP_ID, "--native", "http://127.0.0.1:9/native", "--accepted", "/(/"], "--accepted expects"),
])
def test_bad_flags_exit_2_naming_the_flag(arguments, message):
    result = run_cli("audit", *arguments)
    assert result.returncode == 2
    assert message in result.stderr


# MARK: - Web backends


class WebBackend:
    """A web backend's /login and /callback on an ephemeral port. Careful: /login redirects to
    Apple (response_type code, form_post, state and nonce kept against a cookie), the callback
    checks the state, exchanges the code with its redirect_uri and client_secret, and verifies the
    id_token Apple returns (RS256 by kid, iss, aud, exp, iat recent, sub, nonce). Careless: /login
    is a page with a link (response_type "code id_token"), the callback trusts the id_token of the
    form (alg none taken, aud unchecked) and never exchanges the code."""

    def __init__(self, careless):
        self.careless = careless
        self.mock_url = None
        self.sessions = {}
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body, headers=()):
                data = body.encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                import secrets
                import urllib.parse
                session, state, nonce = (secrets.token_urlsafe(12) for _ in range(3))
                backend.sessions[session] = (state, nonce)
                query = urllib.parse.urlencode({
                    "client_id": WEB_ID, "redirect_uri": backend.redirect_uri, "response_mode": "form_post", "scope": "name email",
                    "response_type": "code id_token" if backend.careless else "code", "state": state, "nonce": nonce})
                location = f"{backend.mock_url}/auth/authorize?{query}"
                cookie = ("Set-Cookie", f"sid={session}; HttpOnly; Path=/")
                if backend.careless:
                    return self.answer(200, f'<a href="{location.replace("&", "&amp;")}">Sign in with Apple</a>', [cookie])
                self.answer(302, "", [("Location", location), cookie])

            def do_POST(self):
                import urllib.parse
                form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
                cookies = dict(part.strip().split("=", 1) for part in (self.headers.get("Cookie") or "").split(";") if "=" in part)
                state, nonce = backend.sessions.pop(cookies.get("sid"), (None, None))
                if state is None or form.get("state") != state:
                    return self.answer(400, "state mismatch")
                try:
                    if backend.careless:
                        claims = verify(form["id_token"], backend.mock_url, audience=None, careless=True)
                    else:
                        exchanged = requests.post(f"{backend.mock_url}/auth/token", timeout=10, data={
                            "client_id": WEB_ID, "client_secret": client_secret(WEB_ID), "grant_type": "authorization_code",
                            "code": form["code"], "redirect_uri": backend.redirect_uri})
                        if exchanged.status_code != 200:
                            return self.answer(400, exchanged.text)
                        claims = verify(exchanged.json()["id_token"], backend.mock_url, audience=WEB_ID)
                except (jwt.InvalidTokenError, jwt.PyJWKClientError, ValueError, KeyError) as error:
                    return self.answer(401, str(error))
                if claims.get("nonce") != nonce:
                    return self.answer(401, "nonce mismatch")
                self.answer(200, json.dumps({"sub": claims["sub"]}))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.redirect_uri = f"{self.origin}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


KEY_CLIENTS = {}


def verify(token, mock_url, audience, careless=False):
    """RS256 by kid from /auth/keys (the key set cached, refetched for an unknown kid), iss, exp,
    iat no older than ten minutes, sub; aud unless careless, which also takes alg none."""
    if careless and jwt.get_unverified_header(token).get("alg") == "none":
        return jwt.decode(token, options={"verify_signature": False})
    keys = KEY_CLIENTS.setdefault(mock_url, key_client(f"{mock_url}/auth/keys"))
    claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"], issuer=ISSUER, audience=audience,
                        options={"verify_aud": audience is not None, "require": ["exp", "iat", "sub"]})
    if time.time() - claims["iat"] > 600 or claims["iat"] > time.time() + 60:
        raise jwt.InvalidIssuedAtError("iat not recent")
    return claims


def web_mock(tmp_path, backend):
    """A mock whose web client also returns to `backend`'s callback."""
    scenario = json.loads(run_cli("scenario", "print").stdout)
    for team in scenario["teams"]:
        for client in team["clients"]:
            if client["client_id"] == WEB_ID:
                client["redirect_uris"].append(backend.redirect_uri)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    mock = MockProcess("--scenario", str(path))
    backend.mock_url = mock.url
    return mock


@pytest.mark.parametrize("careless", [False, True])
def test_web_backends_careful_passes_and_the_careless_twin_is_named(tmp_path, careless):
    backend = WebBackend(careless)
    mock = web_mock(tmp_path, backend)
    try:
        result = run_cli("audit", "--server", mock.url, "--client-id", WEB_ID, "--web", f"{backend.origin}/login", "--json")
        report = json.loads(result.stdout)
        failed = [row["check"] for row in report["checks"] if row["verdict"] == "FAIL"]
        if careless:
            assert sorted(failed) == CARELESS_FAILURES, report
            assert result.returncode == 1
        else:
            assert failed == [], report
            assert result.returncode == 0, result.stderr
            assert "id_token: nonce-mismatch" in [row["check"] for row in report["checks"]]
        # Every request the audit made went to the backend or the mock: the mock's journal holds
        # each authorize it was sent to, and the backend's callback is on its own origin.
        table = run_cli("audit", "--server", mock.url, "--client-id", WEB_ID, "--web", f"{backend.origin}/login")
        assert table.stdout.splitlines()[0] == f"audit of {backend.origin}/login (accepted means: 2xx)"
    finally:
        backend.server.shutdown()
        mock.stop()


def test_web_audit_refuses_a_login_that_leads_elsewhere_than_the_mock(tmp_path):
    backend = WebBackend(careless=False)
    mock = web_mock(tmp_path, backend)
    backend.mock_url = "http://127.0.0.1:9"  # the backend sends browsers to another "Apple"
    try:
        result = run_cli("audit", "--server", mock.url, "--client-id", WEB_ID, "--web", f"{backend.origin}/login")
        assert result.returncode == 2
        assert "not to the mock's /auth/authorize" in result.stderr
        journal = requests.get(f"{mock.url}/__mock/requests", params={"control": "false"}).json()["requests"]
        assert journal == [], "nothing reached Apple's routes"
    finally:
        backend.server.shutdown()
        mock.stop()
