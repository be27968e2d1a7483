"""`appleid-mock audit` against two native backends written with PyJWT and requests: a careful
one, which passes every check, and a careless twin (no audience check, `alg: none` accepted, the
authorization code never exchanged), whose failures the audit names exactly, exiting 1."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
import requests

from conftest import client_secret, run_cli

APP_ID = "com.example.app"
ISSUER = "https://appleid.apple.com"


def backend(mock_url, careless):
    """A native backend's POST /native, on an ephemeral port; returns (server, url)."""
    keys = jwt.PyJWKClient(f"{mock_url}/auth/keys", cache_keys=True)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

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
            if not careless and time.time() - claims["iat"] > 600:
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
    assert status == 0, (stderr, report)
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
    assert failed == ["identityToken: alg-none", "identityToken: wrong-audience",
                      "the authorization code is exchanged at /auth/token"], report
    exchange = next(row for row in report["checks"] if row["check"].startswith("the authorization code"))
    assert exchange["seen"] == "never exchanged"


def test_a_backend_that_refuses_everyone_cannot_be_judged(mock, careful):
    status, report, _ = audit(mock.url, careful, "--accepted", "/never-in-the-body/")
    assert status == 1
    assert [row["check"] for row in report["checks"]] == ["a genuine sign-in"]
    assert report["stopped"].startswith("the backend refused a genuine sign-in")


@pytest.mark.parametrize("arguments, message", [
    (["--client-id", APP_ID], "--native URL is required"),
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
