"""The pytest plugin as a user's suite meets it: pytester writes the user's files and runs them."""
import concurrent.futures
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from appleid_mock import AppleIDMock, AppleIDMockError, MockProcess
from appleid_mock.notifications import NotificationReceiver

from conftest import BINARY, ROOT

# The ten-line test of issue 38: sign in, exchange, verify against /auth/keys, revoke, see the
# notification. Only PyJWT and requests besides the plugin.
TEN_LINES = '''
import jwt, requests

def test_sign_in_exchange_verify_revoke(appleid_mock, apple_notifications):
    credential = appleid_mock.sign_in("alice", "com.example.app")
    tokens = requests.post(f"{appleid_mock.url}/auth/token", data={"grant_type": "authorization_code", "code": credential["authorizationCode"],
                           "client_id": "com.example.app", "client_secret": appleid_mock.client_secret(CLIENT)}).json()
    key = jwt.PyJWKClient(f"{appleid_mock.url}/auth/keys").get_signing_key_from_jwt(tokens["id_token"]).key
    claims = jwt.decode(tokens["id_token"], key, algorithms=["RS256"], audience="com.example.app", issuer="https://appleid.apple.com")
    appleid_mock.fire_event("consent-revoked", "alice", "com.example.app")
    assert apple_notifications.next()["events"]["sub"] == claims["sub"]
'''


def test_plugin_TenLineTest_SignsInVerifiesAndSeesTheNotification(pytester, binary):
    pytester.makepyfile(TEN_LINES.replace("CLIENT", '"com.example.app"'))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_plugin_FailureReport_GivesTheMocksReason_WhenTheExchangeIsRefused(pytester, binary):
    # The twin: a client_secret for another client. The test fails at the exchange (no
    # id_token), and the report says why in the mock's words, not just invalid_client.
    pytester.makepyfile(TEN_LINES.replace("CLIENT", '"com.example.web"'))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*- appleid-mock: requests it refused during the test -*",
        "POST /auth/token 400 invalid_client — client_secret sub is com.example.web but client_id is com.example.app",
        "its stderr meanwhile:",
        "appleid-mock: refused POST /auth/token: invalid_client — client_secret sub is com.example.web but client_id is com.example.app",
    ])


def test_plugin_Fixture_ErrorsWithTheMocksStderr_WhenTheScenarioIsRefused(pytester, binary):
    pytester.makefile(".json", bad='{"teams": 5}')
    pytester.makepyfile("def test_uses(appleid_mock):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-scenario", "bad.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "E *appleid_mock.mock.AppleIDMockError: appleid-mock serve exited 2 before listening (*serve --port 0 --scenario *scenario.json)*",
        "E *appleid-mock: scenario *scenario.json:",
        "E *teams: expected an array, found a number",
        "E *users: missing required key",
    ])


def mocks_serving_under(directory):
    """The pids of `appleid-mock serve` processes whose command line names a path under `directory`
    (the scenario the plugin wrote in pytest's basetemp, there)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if b"serve" in argv and any(str(directory).encode() in argument for argument in argv):
            found.append(int(entry.name))
    return found


def stopped_leftovers(directory):
    """mocks_serving_under(directory), each then killed, so that a failing check leaves nothing."""
    found = mocks_serving_under(directory)
    for pid in found:
        os.kill(pid, signal.SIGKILL)
    return found


def test_plugin_FailedHealthWait_LeavesNoMockRunning_AndWithTheCaTheSameMockServes(pytester, binary):
    # An https mock checked without its CA listens but never answers health: the fixture errors
    # and stops what it started (probe Q3: it was left running after pytest exited).
    tls = pytester.path / "tls"
    subprocess.run([binary, "tls", "generate", "--out", str(tls)], check=True, capture_output=True)
    pytester.makeini(f"[pytest]\nappleid_mock_args = --tls-cert {tls}/cert.pem --tls-key {tls}/key.pem\n")
    pytester.makeconftest("""
        import pytest

        @pytest.fixture(scope="session")
        def appleid_mock_settings(appleid_mock_settings):
            return appleid_mock_settings.replace(timeout=3)
    """)
    pytester.makepyfile("def test_uses(appleid_mock):\n    assert appleid_mock.health()['status'] == 'ok'\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: https://127.0.0.1:* did not answer /__mock/health within 3 s: *"])
    assert stopped_leftovers(pytester.path) == []
    # The twin: with the CA it is healthy, and stopped at the session's end all the same.
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-ca", f"{tls}/ca.pem").assert_outcomes(passed=1)
    assert stopped_leftovers(pytester.path) == []


def test_plugin_Sigterm_StopsTheMock_AndPytestStillEndsByTheSignal(pytester, binary):
    # A cancelled CI job sends SIGTERM, whose default ends Python with no fixture teardown.
    pytester.makepyfile("""
        import pathlib, time

        def test_waits(appleid_mock):
            pathlib.Path("ready").write_text(appleid_mock.url)
            time.sleep(600)
    """)
    inner = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={pytester.path / 'basetemp'}"],
                             cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Waits for the test to start (the deadline only guards against a hang; it decides nothing).
        deadline = time.monotonic() + 300
        while not (pytester.path / "ready").exists():
            assert inner.poll() is None and time.monotonic() < deadline, inner.communicate(timeout=10)[0] if inner.poll() is not None else "no start"
            time.sleep(0.05)
        # The check sees the mock while it runs.
        assert len(mocks_serving_under(pytester.path)) == 1
        inner.send_signal(signal.SIGTERM)
        output = inner.communicate(timeout=120)[0]
    finally:
        if inner.poll() is None:
            inner.kill()
            inner.wait()
            stopped_leftovers(pytester.path)
    # Stopped, and pytest ended by the signal, as it would have without the plugin: the job fails.
    assert inner.returncode == -signal.SIGTERM, output
    assert stopped_leftovers(pytester.path) == []


def test_mockProcess_StopsItsMockAtTheInterpretersExit_WithoutStop(binary, tmp_path):
    # A script that starts a mock and exits without stop(): atexit stops it.
    scenario = _scenario(binary, tmp_path)
    script = f"""
import sys
from appleid_mock import MockProcess
process = MockProcess({binary!r}, {str(scenario)!r})
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert stopped_leftovers(tmp_path) == []


def test_plugin_ScenarioOption_ServesTheGivenUsers_AndTheBuiltInOneDoesNot(pytester, binary):
    scenario = json.loads(subprocess.run([binary, "scenario", "print"], capture_output=True, text=True, check=True).stdout)
    scenario["users"].append(dict(scenario["users"][0], id="dana", email="dana@example.com"))
    pytester.makefile(".json", dana=json.dumps(scenario))
    pytester.makepyfile("""
        def test_dana(appleid_mock):
            assert appleid_mock.sign_in("dana", "com.example.app")["email"] == "dana@example.com"
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-scenario", "dana.json").assert_outcomes(passed=1)
    # The same file in an ini, relative to it.
    pytester.makeini("[pytest]\nappleid_mock_scenario = dana.json\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    # The twin: the built-in scenario has no dana, and the error names the field.
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: POST /__mock/sign-in answered 400: * (field user)"])


def test_plugin_Notifications_SayWhy_WhenEveryTeamNamesItsOwnUrl(pytester, binary):
    # The twin of the ten-line test, whose built-in scenario leaves the team's URL to the receiver.
    scenario = json.loads(subprocess.run([binary, "scenario", "print"], capture_output=True, text=True, check=True).stdout)
    scenario["teams"][0]["notification_url"] = "http://127.0.0.1:3000/apple/notifications"
    pytester.makefile(".json", own=json.dumps(scenario))
    pytester.makepyfile("def test_notified(apple_notifications):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-scenario", "own.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: apple_notifications: every team of the scenario "
                                 "names its own notification_url, so none sends notifications to the receiver"])


def test_plugin_BinOption_BeatsTheEnvironment_AndABadOneIsNamed(pytester, binary, monkeypatch):
    pytester.makepyfile("def test_uses(appleid_mock):\n    assert appleid_mock.health()['status'] == 'ok'\n")
    monkeypatch.setenv("APPLEID_MOCK_BIN", "/nonexistent/appleid-mock")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-bin", binary).assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: the appleid-mock binary /nonexistent/appleid-mock is not an executable file"])
    # The ini option, when neither the command line nor the environment names one.
    monkeypatch.delenv("APPLEID_MOCK_BIN")
    pytester.makeini(f"[pytest]\nappleid_mock_bin = {binary}\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_plugin_CheckoutOption_BuildsThere_AndADirectoryWithoutAPackageIsNamed(pytester, binary, monkeypatch):
    monkeypatch.delenv("APPLEID_MOCK_BIN")
    pytester.makepyfile("def test_uses(appleid_mock):\n    assert appleid_mock.health()['status'] == 'ok'\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-checkout", str(ROOT)).assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-checkout", str(pytester.path))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: appleid_mock_checkout * has no Package.swift (an AppleIDMock checkout is wanted)"])


def test_plugin_ResetFixture_MakesTheNextSignInAFirstOne_AndWithoutItItIsNot(pytester, binary):
    pytester.makepyfile("""
        def test_first(appleid_mock):
            assert appleid_mock.sign_in("alice", "com.example.app")["fullName"] == {"givenName": "Alice", "familyName": "Appleseed"}

        def test_again_without_reset(appleid_mock):
            assert appleid_mock.sign_in("alice", "com.example.app")["fullName"] is None, "Apple gives the name once"

        def test_again_after_reset(appleid_mock_reset):
            assert appleid_mock_reset.sign_in("alice", "com.example.app")["fullName"] == {"givenName": "Alice", "familyName": "Appleseed"}
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_plugin_Methods_DriveTheMock(pytester, binary):
    pytester.makepyfile("""
        import json, urllib.request
        from appleid_mock import AppleIDMockError

        def keys(mock):
            with urllib.request.urlopen(mock.url + "/auth/keys") as answer:
                return sorted(k["kid"] for k in json.load(answer)["keys"])

        def test_methods(appleid_mock_reset):
            mock = appleid_mock_reset
            before = keys(mock)
            rotated = mock.rotate_keys()
            assert rotated["previous"] == "W2ek7HdPaL" and keys(mock) == sorted(before + [rotated["kid"]])
            assert mock.advance_clock(3600)["offset"] == 3600
            web = mock.authorize_web("alice", state="s1")
            assert web["method"] == "GET" and web["url"].startswith("https://app.example.com/callback?code=") and web["url"].endswith("&state=s1")
            popup = mock.authorize_web("alice", response_mode="web_message", state="s2")
            assert sorted(popup) == ["message", "method", "target_origin"]
            assert (popup["method"], popup["target_origin"]) == ("postMessage", "https://app.example.com")
            message = json.loads(popup["message"])
            assert (message["method"], list(message["data"]), message["data"]["authorization"]["state"]) == ("oauthDone", ["authorization"], "s2")
            assert message["data"]["authorization"]["code"].startswith("c")
            cancelled = mock.authorize_web("alice", response_mode="web_message", cancel=True)
            assert json.loads(cancelled["message"]) == {"method": "oauthDone", "data": {"error": "user_cancelled_authorize"}}
            try:
                mock.authorize_web("alice", response_mode="web_msg")
                raise AssertionError("an unknown response_mode was accepted")
            except AppleIDMockError as error:
                assert error.status == 400 and str(error).endswith("(field response_mode)") and error.body["apple_error"] == "invalid_request"
            assert mock.token("alice", "com.example.app", defect="alg-none").split(".")[2] == ""
            assert mock.token("alice", "com.example.app").count(".") == 2
            fault = mock.faults.add(path="/auth/token", times=1, action="respond", status=503)
            assert (fault["id"], fault["remaining"]) == ("f1", 1) and [f["id"] for f in mock.faults.list()] == ["f1"]
            try:
                mock.faults.add(path="/__mock/reset", action="close")
                raise AssertionError("a fault on a /__mock path was installed")
            except AppleIDMockError as error:
                assert error.status == 400 and str(error).endswith("(field path)")
            assert mock.faults.clear() == 1
            mock.sign_in("bob", "com.example.app")
            journal = mock.requests(path="/__mock/sign-in")
            assert [(r["method"], r["status"]) for r in journal][-1] == ("POST", 200)
            assert mock.requests(path="/auth/token") == []
            events = mock.fire_event("email-disabled", "bob", "com.example.app")
            assert events["type"] == "email-disabled"
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_clientSecret_IsAcceptedByTheMock_AndOneFromAnotherKeyIsNot(binary, tmp_path):
    process = MockProcess(binary, _scenario(binary, tmp_path))
    try:
        mock = process.mock
        for secret, expected in ((mock.client_secret("com.example.app"), 200), (mock.client_secret("com.example.app", key=_other_key(tmp_path)), 400)):
            code = mock.sign_in("alice", "com.example.app")["authorizationCode"]
            status, body = _exchange(mock.url, code, secret)
            assert (status, list(body)[:1]) == (expected, ["access_token"] if expected == 200 else ["error"]), body
        assert mock.refusals()[-1] == ("POST /auth/token 400 invalid_client — client_secret signature does not verify "
                                       "with key MOCKKEY001 of team MOCKTEAM01")
    finally:
        assert process.stop() == 0


def test_clientSecret_RefusesAKeyThatIsNotP256(binary, tmp_path):
    rsa = tmp_path / "rsa.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", str(rsa)], check=True, capture_output=True)
    mock = AppleIDMock("http://127.0.0.1:9")
    with pytest.raises(AppleIDMockError, match=r"^client_secret: key .*rsa.p8: not a P-256 key \(the curve is not prime256v1\)$"):
        mock.client_secret("com.example.app", key=str(rsa))
    with pytest.raises(AppleIDMockError, match=r"is not the built-in test key; pass key="):
        mock.client_secret("com.example.app", key_id="OTHERKEY01")


def time_of(mock):
    """The mock clock's epoch seconds."""
    return mock._call("GET", "/__mock/clock")["epoch"]


@contextlib.contextmanager
def receiving(binary, tmp_path):
    """A mock whose scenario sends notifications to a receiver attached to it, and what a test
    sees of that receiver; the scenario given as the plugin's fixture gives it (the receiver
    checks aud against its clients)."""
    receiver = NotificationReceiver()
    path = _scenario(binary, tmp_path, receiver.url)
    process = MockProcess(binary, path, scenario=json.loads(path.read_text()))
    try:
        receiver.attach(process.mock)
        from appleid_mock.notifications import AppleNotifications
        yield process.mock, receiver, AppleNotifications(receiver)
    finally:
        assert process.stop() == 0
        receiver.stop()


def deliver_notification(mock, receiver, user="alice", **fields):
    """POSTs a notification the mock signed for `user` (with `fields`) to the receiver; its status."""
    token = mock.token(user, "com.example.app", kind="notification", type="consent-revoked", **fields)
    return _post(receiver.url, {"payload": token["payload"] if "payload" in token else token["token"]})


def test_notifications_Receiver_RefusesAForgedNotification_AndTakesAGenuineOne(binary, tmp_path):
    with receiving(binary, tmp_path) as (mock, receiver, seen):
        for defect, status in ((None, 200), ("bad-signature", 400), ("wrong-issuer", 400)):
            assert deliver_notification(mock, receiver, **({"defect": defect} if defect else {})) == status
        assert seen.next(timeout=5)["type"] == "consent-revoked"
        with pytest.raises(AppleIDMockError, match=r"^a notification failed verification: the RS256 signature does not verify under W2ek7HdPaL$"):
            seen.next(timeout=5)
        with pytest.raises(AppleIDMockError, match=r"^a notification failed verification: iss is 'https://appleid.apple.com.attacker.example', not 'https://appleid.apple.com'$"):
            seen.next(timeout=5)
        # Signed by the mock, each with one claim a careful backend refuses.
        iat = int(time_of(mock)) + 86_400
        for fields, reason in ((dict(claims={"aud": "com.attacker.app"}), "aud 'com.attacker.app' is none of the scenario's clients"),
                               (dict(defect="hs256-public-key"), "alg is 'HS256', not RS256"),
                               (dict(claims={"events": '{"sub":"x"}'}), """the events claim '{"sub":"x"}' has no type"""),
                               (dict(claims={"iat": iat}), f"iat {iat} is after the mock's clock (")):
            assert deliver_notification(mock, receiver, **fields) == 400
            with pytest.raises(AppleIDMockError) as said:
                seen.next(timeout=5)
            assert str(said.value).startswith("a notification failed verification: " + reason), said.value
        assert seen.received() == 7


def test_notifications_Next_FromTwoThreadsAtOnce_HandsOutOneNotificationEach(binary, tmp_path):
    with receiving(binary, tmp_path) as (mock, receiver, seen):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            waiting = [pool.submit(seen.next, 30) for _ in range(2)]
            for user in ("alice", "bob"):
                assert deliver_notification(mock, receiver, user) == 200
            subs = {future.result()["sub"] for future in waiting}
        assert len(subs) == 2
        # The twin: a call that times out takes no place; the next call gets the next one.
        with pytest.raises(AppleIDMockError, match="no notification arrived"):
            seen.next(timeout=0.05)
        assert deliver_notification(mock, receiver, "carol") == 200
        assert seen.next(timeout=5)["type"] == "consent-revoked"


def test_plugin_UrlOption_UsesARunningMock_AndNotificationsThenSayWhyNot(pytester, binary, tmp_path):
    process = MockProcess(binary, _scenario(binary, tmp_path))
    try:
        pytester.makepyfile("""
            def test_uses(appleid_mock):
                assert appleid_mock.sign_in("alice", "com.example.app")["email"] == "alice@example.com"

            def test_notifications(apple_notifications):
                pass
        """)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-url", process.mock.url)
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: apple_notifications: the session's mock was started elsewhere *"])
        # The twin: nothing listens there.
        pytester.makeconftest("""
            import pytest
            @pytest.fixture(scope="session")
            def appleid_mock_settings(appleid_mock_settings):
                return appleid_mock_settings.replace(timeout=0.2)
        """)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-url", "http://127.0.0.1:9", "-k", "test_uses")
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["E *appleid_mock.mock.AppleIDMockError: http://127.0.0.1:9 did not answer /__mock/health within 0.2 s: GET http://127.0.0.1:9/__mock/health: *"])
    finally:
        assert process.stop() == 0


def test_package_BuiltInKey_IsTheRepositorysTestKey():
    from appleid_mock.mock import BUILT_IN_KEY
    assert BUILT_IN_KEY.read_text() == (ROOT / "Keys" / "AuthKey_MOCKKEY001.p8").read_text()


# ---- helpers ----

def _scenario(binary, directory, notification_url=None):
    scenario = json.loads(subprocess.run([binary, "scenario", "print"], capture_output=True, text=True, check=True).stdout)
    if notification_url:
        scenario["teams"][0]["notification_url"] = notification_url
    path = directory / "scenario.json"
    path.write_text(json.dumps(scenario))
    return path


def _other_key(directory):
    path = directory / "AuthKey_OTHER.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path)], check=True, capture_output=True)
    return str(path)


def _post(url, body):
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_changePassword_EndsTheRefreshToken_NotifiesNone_AndRefusesAnUnknownUser(binary, tmp_path):
    process = MockProcess(binary, _scenario(binary, tmp_path))
    try:
        mock = process.mock
        secret = mock.client_secret("com.example.app")
        status, tokens = _exchange(mock.url, mock.sign_in("alice", "com.example.app")["authorizationCode"], secret)
        assert status == 200, tokens
        refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": "com.example.app", "client_secret": secret}
        assert _token(mock.url, refresh)[0] == 200
        assert mock.change_password("alice") == {"notification": None, "notifications": [], "type": "password-changed", "user": "alice"}
        assert _token(mock.url, refresh) == (400, {"error": "invalid_grant"})
        with pytest.raises(AppleIDMockError) as refused:
            mock.change_password("mallory")
        assert refused.value.status == 404 and str(refused.value).endswith("(field user)")
    finally:
        assert process.stop() == 0


def _exchange(url, code, secret):
    return _token(url, {"grant_type": "authorization_code", "code": code, "client_id": "com.example.app", "client_secret": secret})


def _token(url, fields):
    """POST /auth/token with `fields`: (status, JSON body)."""
    import urllib.error
    import urllib.parse
    import urllib.request
    form = urllib.parse.urlencode(fields)
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url + "/auth/token", form.encode(), timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_package_FreshVirtualenv_RunsTheTenLineTest_WithNoOtherSetup(binary, tmp_path):
    """Issue 38's first "done when": a new venv, the plugin installed from this checkout with its
    jwt and requests extras (and pytest), the ten-line test, APPLEID_MOCK_BIN; nothing else."""
    import sys
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              f"{ROOT / 'integrations' / 'python'}[jwt,requests]", "pytest"], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    (tmp_path / "test_ten_lines.py").write_text(TEN_LINES.replace("CLIENT", '"com.example.app"'))
    import os
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_ten_lines.py"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.splitlines()[-1].startswith("1 passed"), run.stdout + run.stderr


def test_faults_Incident_ReproducesAppleOutage_UntilItsMinutesPass_AndAnUnknownOneIsNamed(binary, tmp_path):
    process = MockProcess(binary, _scenario(binary, tmp_path))
    try:
        mock = process.mock
        installed = mock.faults.incident("token-endpoint-outage", minutes=1)
        assert installed["incident"] == "token-endpoint-outage" and installed["faults"]
        assert {f["incident"] for f in mock.faults.list()} == {"token-endpoint-outage"}
        code = mock.sign_in("alice", "com.example.app")["authorizationCode"]
        assert _exchange_status(mock.url, code, mock.client_secret("com.example.app")) == 503
        # The outage lasts its minute of mock time; then Apple's endpoint answers again.
        mock.advance_clock(61)
        assert _exchange_status(mock.url, code, mock.client_secret("com.example.app")) == 200
        # Its time over, the incident ended: nothing left to clear, and the clock set back brings nothing back.
        assert mock.faults.list() == []
        assert mock.faults.clear(incident="token-endpoint-outage") == 0
        mock.advance_clock(-120)
        assert mock.faults.list() == []
        # Apple's own answer (the secret's iat is now after mock now: 400), not the outage's 503.
        assert _exchange_status(mock.url, code, mock.client_secret("com.example.app")) == 400
        # Twin: an incident cleared while it acts.
        installed = mock.faults.incident("token-endpoint-outage", minutes=1)
        assert mock.faults.clear(incident="token-endpoint-outage") == len(installed["faults"])
        # The twin: an incident the mock does not know, refused with the field named.
        with pytest.raises(AppleIDMockError, match=r"^POST /__mock/faults answered 400: .* \(field incident\)$"):
            mock.faults.incident("no-such-incident")
    finally:
        assert process.stop() == 0


def _exchange_status(url, code, secret):
    """The status /auth/token answers a code exchange (a fault's 503 has an HTML body)."""
    import urllib.error
    import urllib.parse
    import urllib.request
    form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "client_id": "com.example.app", "client_secret": secret})
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url + "/auth/token", form.encode(), timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
