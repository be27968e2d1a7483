"""What the `serve --state` suites share: the seed and bounds, a mock on a state file, a refused
start, a notification receiver (test_state_crash.py, test_state_refusals.py, test_state_restart.py)."""
import collections
import hashlib
import http.server
import json
import os
import queue
import subprocess
import threading

import jwt
import requests

from conftest import BINARY, ROOT, run_cli


SEED = int(os.environ.get("APPLEID_MOCK_CRASH_SEED", "20261126"))
ROUNDS = 20
USER_WORKERS = 4
USERS_PER_WORKER = 3
MAX_LIVE_USERS_PER_WORKER = 5
KEY_BUDGET = 60               # published keys at most; with max_published 100 a rotation never retires one
APP = "com.example.app"
ISSUER = "https://appleid.apple.com"
CODE_USED = {"error": "invalid_grant", "error_description": "The code has already been used."}
LOAD_TIMEOUT = (5, 30)        # connect, read: a request cut by SIGKILL fails at once
DELIVERY_DEADLINE = 60        # seconds: a loop bound for notifications to settle, not a speed claim


# MARK: - Processes


class StateMock:
    """`appleid-mock serve --port 0 --state FILE`: the URL from its first stdout line; stdout and
    stderr are drained by threads (a refusal line per refused request would otherwise fill the
    pipe and stall the mock), the last lines of stderr kept for failure messages."""

    def __init__(self, state, scenario=None, *extra):
        args = [BINARY, "serve", "--port", "0", "--state", str(state)]
        if scenario is not None:
            args += ["--scenario", str(scenario)]
        self.process = subprocess.Popen([*args, *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr = collections.deque(maxlen=200)
        lines = queue.Queue()
        threading.Thread(target=self._drain, args=(self.process.stdout, lines.put), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr, self.stderr.append), daemon=True).start()
        try:
            first = lines.get(timeout=60)
        except queue.Empty:
            self.process.kill()
            raise AssertionError(f"{' '.join(args)}: no first line within 60 s; stderr: {self.stderr_text()}") from None
        if first is None or not first.startswith("listening on "):
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"{' '.join(args)}: first line {first!r}, exit {self.process.returncode}; stderr: {self.stderr_text()}")
        self.url = first.strip().removeprefix("listening on ")

    @staticmethod
    def _drain(stream, put):
        for line in stream:
            put(line.rstrip("\n"))
        put(None)

    def stderr_text(self):
        return "\n".join(line for line in self.stderr if line is not None)

    def kill(self):
        self.process.kill()
        self.process.wait()

    def stop(self):
        self.process.terminate()
        status = self.process.wait(timeout=30)
        assert status == 0, f"SIGTERM: exit {status}; stderr: {self.stderr_text()}"


def refused_start(*args):
    """`appleid-mock serve --port 0 ARGS` that must refuse to start: its exit status and stderr.
    A mock that serves instead is stopped, and the test fails saying so."""
    try:
        result = subprocess.run([BINARY, "serve", "--port", "0", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                                timeout=30)
    except subprocess.TimeoutExpired as timeout:
        raise AssertionError(f"serve {args} did not exit: it served ({timeout.stdout!r})") from None
    assert "listening on" not in result.stdout, (result.stdout, result.stderr)
    return result.returncode, result.stderr


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def built_in_scenario():
    printed = run_cli("scenario", "print")
    assert printed.returncode == 0, printed.stderr
    return json.loads(printed.stdout)


class Receiver:
    """The app group's notification endpoint: answers every POST with `status` (switched by the
    test) and keeps what it answered: the status, the JWT and its decoded `events` claim."""

    def __init__(self):
        self.status = 200
        self.lock = threading.Lock()
        self.received = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = receiver.status
                try:
                    token = json.loads(body)["payload"]
                    claims = jwt.decode(token, options={"verify_signature": False})
                    events = json.loads(claims["events"]) if isinstance(claims["events"], str) else claims["events"]
                except (ValueError, KeyError, jwt.InvalidTokenError):
                    token, events = None, None
                with receiver.lock:
                    receiver.received.append((status, token, events))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/apple/notifications"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def seen(self):
        with self.lock:
            return list(self.received)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def fresh_key(rng):
    """A kid of 10 letters and digits like Apple's, and a new RSA-2048 private key as PKCS#8 PEM."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    kid = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(10))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return kid, pem.decode()


class Unanswered(Exception):
    """The request's answer never came (the process died under it): its outcome is unknown."""


class TimedSession(requests.Session):
    """A session whose requests give up after LOAD_TIMEOUT: a mock that hangs fails the test
    instead of stalling it."""

    def request(self, method, url, **arguments):
        arguments.setdefault("timeout", LOAD_TIMEOUT)
        return super().request(method, url, **arguments)


def send(session, method, url, **arguments):
    try:
        return session.request(method, url, **arguments)
    except requests.RequestException as error:
        raise Unanswered(f"{method} {url}: {type(error).__name__}") from error


def answer(response):
    """(status, JSON body or text) for exact comparisons."""
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text
