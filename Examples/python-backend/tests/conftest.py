"""Starts the mock (HTTPS on 443 as appleid.apple.com) and the backend inside the namespace the
`e2e` script made; the tests then act as the user's browser, the iOS app and the user at Apple.
With EXAMPLE_STACK=running both already run (scripts/oci-check runs these tests inside the
compose stack's backend container)."""
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import requests

HERE = pathlib.Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]
BACKEND = "http://127.0.0.1:3000"
APPLE = "https://appleid.apple.com"


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    if os.environ.get("EXAMPLE_STACK") == "running":
        # The compose stack's mock keeps its state across restarts (--state): start from the
        # scenario, as a fresh mock would, so alice's first login here is a first one.
        answer = requests.post(f"{APPLE}/__mock/reset", timeout=10)
        assert answer.status_code == 200, answer.text
        yield
        return
    if "EXAMPLE_TLS" not in os.environ:
        pytest.skip("run through Examples/python-backend/e2e (it makes the network namespace)")
    binary, tls = os.environ["APPLEID_MOCK_BIN"], pathlib.Path(os.environ["EXAMPLE_TLS"])
    scenario = json.loads(subprocess.run([binary, "scenario", "print"], capture_output=True, text=True, check=True).stdout)
    scenario["teams"][0]["notification_url"] = f"{BACKEND}/apple/notifications"
    path = tmp_path_factory.mktemp("scenario") / "scenario.json"
    path.write_text(json.dumps(scenario))
    mock = subprocess.Popen([binary, "serve", "--scenario", str(path), "--port", "443", "--base-url", APPLE,
                             "--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert mock.stdout.readline().strip() == "listening on https://127.0.0.1:443"
    backend = subprocess.Popen([sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", "3000", "--log-level", "warning"],
                               cwd=HERE, env=dict(os.environ, APPLE_PRIVATE_KEY_FILE=str(ROOT / "Keys" / "AuthKey_MOCKKEY001.p8")),
                               stderr=subprocess.PIPE, text=True)
    try:
        # Until the backend answers; a backend that exits (a missing module, a taken port) fails
        # the suite at once with its own words, and one that never answers after 300 tries too.
        for _ in range(300):
            if backend.poll() is not None:
                pytest.fail(f"the backend exited {backend.returncode} before answering:\n{backend.stderr.read()}", pytrace=False)
            try:
                requests.get(f"{BACKEND}/?redirect=0", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail(f"the backend did not answer on {BACKEND}", pytrace=False)
        yield
    finally:
        backend.terminate()
        backend.wait(timeout=20)
        mock.terminate()
        assert mock.wait(timeout=20) == 0
