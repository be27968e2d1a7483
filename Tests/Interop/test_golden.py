"""The golden run (issue 20, "Done when"): two `appleid-mock serve --seed 7` processes on a frozen
clock run one scripted sequence — headless authorize, the code exchange, a refresh, a revoke,
/auth/keys, a rotation with a generated key, /auth/keys again, a native sign-in, an account
event whose notification reaches a local receiver and the event feed — and every answer, and
the notification the receiver got, is byte for byte the same in both, and the same as the
committed transcript Tests/Interop/golden/seed7.jsonl (one JSON object a step: its name, method,
path, status and the body exactly as answered).

To write the transcript anew after a change that is meant to change an answer, run
`UPDATE_GOLDEN=1 scripts/test` (or this file alone with pytest and UPDATE_GOLDEN=1): the two
processes must still agree; the diff of the file is the change to review.

The one thing the test sets that differs from run to run is the receiver's port: it stands in the
transcript as 127.0.0.1:RECEIVER (the two processes share one receiver, so between them it is the
same). The client_secret is minted once, at the frozen instant, and sent to both (ES256
signatures are randomized; no answer carries it).

Nothing else is normalized. A field that follows real time on a frozen clock is a bug of the mock
(issue 20 item 4: one injected time source for everything), and this test names the step and
shows the bytes. `/__mock/clock` is left out: its `offset` is mock time minus real time by
definition.
"""
import http.client
import json
import os
import pathlib
import urllib.parse

from conftest import MockProcess, run_cli
from test_notifications import Receiver

GOLDEN = pathlib.Path(__file__).parent / "golden" / "seed7.jsonl"
SEED = "7"
START = "2030-01-01T00:00:00Z"
EPOCH = 1893456000
REDIRECT_URI = "http://localhost:3000/callback"
RECEIVER_PLACEHOLDER = "127.0.0.1:RECEIVER"


class Session:
    """One mock's side of the script: each request's answer is recorded as a transcript step."""

    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.steps = []

    def request(self, step, method, path, form=None, json_body=None):
        headers, body = {}, None
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urllib.parse.urlencode(form)
        elif json_body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(json_body, separators=(",", ":"))
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8")
        finally:
            connection.close()
        self.steps.append({"step": step, "method": method, "path": path, "status": response.status, "body": text})
        return text

    def json(self, *args, **kwargs):
        return json.loads(self.request(*args, **kwargs))


def scenario_file(tmp_path, receiver_url):
    printed = run_cli("scenario", "print")
    assert printed.returncode == 0, printed.stderr
    scenario = json.loads(printed.stdout)
    scenario["clock"] = {"start": START, "frozen": True}
    scenario["teams"][0]["notification_url"] = receiver_url
    path = tmp_path / "golden-scenario.json"
    path.write_text(json.dumps(scenario))
    return path


def script(session, secret, receiver):
    """The scripted sequence; returns the bodies the receiver got."""
    authorized = session.json("authorize", "POST", "/__mock/authorize", json_body={
        "client_id": "com.example.web", "redirect_uri": REDIRECT_URI, "response_type": "code", "response_mode": "form_post",
        "scope": "name email", "state": "s1", "nonce": "n1", "user": "alice"})
    code = authorized["form"]["code"]
    client = {"client_id": "com.example.web", "client_secret": secret}
    tokens = session.json("token", "POST", "/auth/token",
                          form={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, **client})
    session.request("refresh", "POST", "/auth/token", form={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], **client})
    session.request("revoke", "POST", "/auth/revoke",
                    form={"token": tokens["refresh_token"], "token_type_hint": "refresh_token", **client})
    session.request("keys", "GET", "/auth/keys")
    session.request("rotate", "POST", "/__mock/keys/rotate", json_body={})
    session.request("keys after rotation", "GET", "/auth/keys")
    session.request("control keys", "GET", "/__mock/keys")
    session.request("native sign-in", "POST", "/__mock/sign-in", json_body={"user": "bob", "client_id": "com.example.app"})
    fired = session.json("account event", "POST", "/__mock/events",
                         json_body={"type": "consent-revoked", "user": "bob", "client_id": "com.example.app"})
    session.request("notification settled", "GET", f"/__mock/notifications?after={fired['notification'] - 1}&wait=10")
    received = [receiver.next()[2]]
    session.request("event feed", "GET", "/__mock/events")
    return received


def run_one(scenario, secret, receiver):
    mock = MockProcess("--seed", SEED, "--scenario", str(scenario))
    try:
        session = Session(mock.url)
        received = script(session, secret, receiver)
    finally:
        mock.stop()
    notifications = [{"step": "notification received", "method": "POST", "path": "/apple/notifications", "status": 200,
                      "body": body.decode("utf-8")} for body in received]
    return session.steps + notifications


def lines(steps):
    return [json.dumps(step, sort_keys=True) for step in steps]


def differences(a, b):
    """Each step where `a` and `b` differ: its number and name, and both sides around the first
    byte that differs."""
    found = []
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else "(no step)"
        right = b[index] if index < len(b) else "(no step)"
        if left == right:
            continue
        at = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
        name = json.loads(left)["step"] if left != "(no step)" else json.loads(right)["step"]
        found.append(f"step {index} ({name}), from character {at}:\n  {left[max(0, at - 80):at + 80]}\n  {right[max(0, at - 80):at + 80]}")
    return "\n".join(found)


def test_golden_two_seeded_processes_answer_byte_for_byte_alike_and_as_the_transcript(tmp_path):
    receiver = Receiver()
    try:
        scenario = scenario_file(tmp_path, receiver.url)
        minted = run_cli("client-secret", "--issued-at", str(EPOCH), "--lifetime", "86400")
        assert minted.returncode == 0, minted.stderr
        secret = minted.stdout.strip()
        first = lines(run_one(scenario, secret, receiver))
        second = lines(run_one(scenario, secret, receiver))
    finally:
        receiver.stop()
    assert first == second, "the two seeded processes differ:\n" + differences(first, second)

    address = urllib.parse.urlsplit(receiver.url).netloc
    transcript = [line.replace(address, RECEIVER_PLACEHOLDER) for line in first]
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(transcript) + "\n")
    committed = GOLDEN.read_text().splitlines()
    assert transcript == committed, (f"the run (first line of each pair) differs from {GOLDEN.name} (second line); "
                                     "UPDATE_GOLDEN=1 writes it anew when the change is meant:\n" + differences(transcript, committed))
