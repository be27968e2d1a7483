"""Schemathesis hooks for test_contract.py (loaded through SCHEMATHESIS_HOOKS): one `before_call`,
which every case of every phase passes just before it is sent.

Two adjustments, neither of which hides an answer from the checks (and one clean-up: a fault the
run installs is removed at once, so it never acts on the Apple routes the run checks):

- Long polls (`wait=S` on the event feed, the notification log and the request journal) are held
  to 0.1 s when the generated value is a valid wait: the document's truthful bound is 60 s, and
  a run of hundreds of cases cannot sit through minutes of empty polls. Invalid waits (`-1`,
  `61`, `abc`) go out unchanged. The real waiting is covered by the Swift tests.
- Half of the form bodies sent to Apple's routes that carry `client_id` and `client_secret` get
  a real client and a valid client_secret, minted at the mock's current time (the run moves
  the clock): without one every such request stops at `invalid_client` and the grant,
  revocation and migration code behind it (decoding of codes and tokens the fuzzer made up)
  would never run. Which half is a function of the generated client_id, so a case replays the
  same.
"""
import hashlib
import os
import pathlib
import time

import jwt
import requests
import schemathesis

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASE_URL = os.environ.get("APPLEID_CONTRACT_BASE_URL", "")
DEVELOPER_KEY = (ROOT / "Keys" / "AuthKey_MOCKKEY001.p8").read_text()
CLIENTS = ("com.example.web", "com.example.app")
APPLE_FORMS = {"/auth/token", "/auth/revoke", "/auth/usermigrationinfo"}
SHORT_WAIT = 0.1


def mock_time():
    """The mock clock's seconds (it is what client_secret times are checked against)."""
    try:
        return int(requests.get(f"{BASE_URL}/__mock/clock", timeout=5).json()["epoch"])
    except (requests.RequestException, ValueError, KeyError):
        return int(time.time())


def client_secret(client_id):
    """An ES256 client_secret of team MOCKTEAM01 (key MOCKKEY001) for `client_id`, issued now."""
    now = mock_time()
    claims = {"iss": "MOCKTEAM01", "iat": now, "exp": now + 600, "aud": "https://appleid.apple.com", "sub": client_id}
    return jwt.encode(claims, DEVELOPER_KEY, algorithm="ES256", headers={"kid": "MOCKKEY001"})


def short_wait(query):
    """`query` with a valid `wait` held to SHORT_WAIT."""
    try:
        seconds = float(query["wait"])
    except (TypeError, ValueError):
        return query
    return {**query, "wait": SHORT_WAIT} if 0 < seconds <= 60 else query


def with_real_client(body):
    """`body` with, for half of the generated client_ids, a real client and its client_secret."""
    generated = body.get("client_id")
    if not isinstance(generated, str) or "client_secret" not in body:
        return body
    digest = hashlib.sha256(generated.encode("utf-8", "surrogatepass")).digest()
    if digest[0] % 2:
        return body
    client = CLIENTS[digest[1] % len(CLIENTS)]
    return {**body, "client_id": client, "client_secret": client_secret(client)}


@schemathesis.hook
def before_call(context, case, kwargs):
    # Every phase's cases pass here just before they are sent (map_* hooks miss the coverage phase).
    if isinstance(case.query, dict) and "wait" in case.query:
        case.query = short_wait(case.query)
    if BASE_URL and case.operation.path in APPLE_FORMS and isinstance(case.body, dict):
        case.body = with_real_client(case.body)


@schemathesis.hook
def after_call(context, case, response):
    # A fault the run installs would then act on the Apple routes the run checks (a 599, a reset, a
    # ten-minute delay): each is removed as soon as its POST was answered. The faults themselves
    # are exercised by FaultInjectionTests.
    if BASE_URL and case.operation.path == "/__mock/faults" and case.method.upper() == "POST" and response.status_code == 201:
        requests.delete(f"{BASE_URL}/__mock/faults", timeout=5)
