"""The mock comes from the appleid-mock pytest plugin (integrations/python): its session fixture
`appleid_mock` starts it as appleid.apple.com (HTTPS on 443, inside the namespace the `e2e`
script made) with the app group's notifications sent to this backend; `stack` then starts the
backend. The tests act as the user's browser, the iOS app and the user at Apple.
With EXAMPLE_STACK=running both already run (scripts/oci-check runs these tests inside the
compose stack's backend container): the plugin uses the mock at https://appleid.apple.com."""
import os
import pathlib
import subprocess
import sys
import time

import pytest
import requests
from appleid_mock.process import find_binary, load_scenario

HERE = pathlib.Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]
BACKEND = "http://127.0.0.1:3000"
APPLE = "https://appleid.apple.com"


@pytest.fixture(scope="session")
def appleid_mock_settings(appleid_mock_settings):
    """The plugin's settings, made this suite's: the stack's mock, or one on 443 standing in for Apple."""
    if os.environ.get("EXAMPLE_STACK") == "running":
        return appleid_mock_settings.replace(url=APPLE, ca=os.environ.get("SSL_CERT_FILE"))
    if "EXAMPLE_TLS" not in os.environ:
        pytest.skip("run through Examples/python-backend/e2e (it makes the network namespace)")
    tls = pathlib.Path(os.environ["EXAMPLE_TLS"])
    scenario = load_scenario(find_binary(appleid_mock_settings.binary), None)
    scenario["teams"][0]["notification_url"] = f"{BACKEND}/apple/notifications"
    return appleid_mock_settings.replace(
        scenario=scenario, port=443, ca=str(tls / "ca.pem"), notifications=False,
        serve_args=("--base-url", APPLE, "--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem")))


@pytest.fixture(scope="session")
def stack(appleid_mock):
    if os.environ.get("EXAMPLE_STACK") == "running":
        # The compose stack's mock keeps its state across restarts (--state): start from the
        # scenario, as a fresh mock would, so alice's first login here is a first one.
        appleid_mock.reset()
        yield appleid_mock
        return
    assert appleid_mock.url == "https://127.0.0.1:443"
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
        yield appleid_mock
    finally:
        backend.terminate()
        backend.wait(timeout=20)
