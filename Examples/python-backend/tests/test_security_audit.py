"""`appleid-mock audit` against this backend, native and web: every check passes (a genuine
sign-in accepted, the code exchanged as Apple requires, a key rotation followed, every defective
id_token refused, nobody accepted while Apple is down). Runs last (after test_backend.py): the
audit rotates the mock's keys and signs alice in many times."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import APPLE

HERE = pathlib.Path(__file__).resolve().parents[1]


def audit(*arguments):
    if os.environ.get("EXAMPLE_STACK") == "running":
        pytest.skip("the audit runs from the e2e script, where the appleid-mock binary is (the compose stack's backend has none)")
    tls = pathlib.Path(os.environ["EXAMPLE_TLS"])
    result = subprocess.run([os.environ["APPLEID_MOCK_BIN"], "audit", "--server", APPLE, "--ca", str(tls / "ca.pem"), "--user", "alice",
                             "--json", *arguments], capture_output=True, text=True, timeout=300)
    report = json.loads(result.stdout) if result.stdout.startswith("{") else None
    return result.returncode, report, result.stderr


def test_the_native_login_passes_every_check_of_the_audit(stack):
    status, report, stderr = audit("--client-id", "com.example.app", "--native", "http://127.0.0.1:3000/native")
    assert report, stderr
    assert [row for row in report["checks"] if row["verdict"] != "ok"] == [], report["stopped"]
    assert status == 0, stderr
    # A genuine sign-in, the code exchange, a rotation, 11 defects (no nonce: an app has none), 503, broken keys, back.
    assert len(report["checks"]) == 3 + 11 + 3


def test_the_web_login_passes_every_check_of_the_audit(stack):
    status, report, stderr = audit("--client-id", "com.example.web", "--web", "http://localhost:3000/")
    assert report, stderr
    assert [row for row in report["checks"] if row["verdict"] != "ok"] == [], report["stopped"]
    assert status == 0, stderr
    # The backend sends a nonce, so nonce-mismatch is tried too: all 12 defects.
    assert "id_token: nonce-mismatch" in [row["check"] for row in report["checks"]]
    assert len(report["checks"]) == 3 + 12 + 3
