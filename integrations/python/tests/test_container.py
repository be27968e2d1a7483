"""AppleIDMockContainer against the image the tests build (scripts/oci-check builds it with podman
and runs these through rootful podman's Docker-compatible socket, `podman system service`, with
DOCKER_HOST and APPLEID_MOCK_TEST_IMAGE set). Without an engine they skip, saying so."""
import json
import os
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import quick_inner_runs
from test_plugin import TEN_LINES

IMAGE = os.environ.get("APPLEID_MOCK_TEST_IMAGE")


def engine_or_skip():
    """The Docker client of the engine DOCKER_HOST (or /var/run/docker.sock) names, else a skip."""
    host = os.environ.get("DOCKER_HOST")
    if not host and not os.path.exists("/var/run/docker.sock"):
        pytest.skip("no container engine: DOCKER_HOST is unset and /var/run/docker.sock does not exist "
                    "(scripts/oci-check runs these against rootful podman's socket)")
    docker = pytest.importorskip("docker", reason="the testcontainers extra is not installed")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as error:  # the SDK raises several kinds; any means no engine answers
        pytest.skip(f"no container engine: {host or '/var/run/docker.sock'} does not answer ({error})")
    if not IMAGE:
        pytest.skip("APPLEID_MOCK_TEST_IMAGE names no AppleIDMock image (scripts/oci-check sets it to the image it built)")
    return client


@pytest.fixture
def engine(monkeypatch):
    client = engine_or_skip()
    # Testcontainers' reaper is an image from a registry; the containers here are removed by stop().
    monkeypatch.setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
    quick_inner_runs(monkeypatch)
    return client


def test_container_TenLineTest_RunsOnTheImage_ThroughThePluginsImageOption(pytester, engine):
    pytester.makepyfile(TEN_LINES.replace("CLIENT", '"com.example.app"'))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--appleid-mock-image", IMAGE)
    result.assert_outcomes(passed=1)


def test_container_ScenarioIsCopiedIn_AndTheBuiltInOneLacksItsUser(engine, tmp_path):
    from appleid_mock import AppleIDMockError
    from appleid_mock.testcontainers import AppleIDMockContainer
    scenario = json.loads(subprocess.run([os.environ.get("APPLEID_MOCK_BIN", "appleid-mock"), "scenario", "print"],
                                         capture_output=True, text=True, check=True).stdout)
    scenario["users"].append(dict(scenario["users"][0], id="dana", email="dana@example.com"))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    # Unreadable to the image's user, were it mounted: a copy has the mode it is given.
    path.chmod(0o600)
    with AppleIDMockContainer(IMAGE, scenario=str(path), notifications=False) as apple:
        assert apple.mock.sign_in("dana", "com.example.app")["email"] == "dana@example.com"
        mounts = apple.get_wrapped_container().attrs.get("Mounts") or []
        assert mounts == [], f"the scenario is copied in, not mounted: {mounts}"
    with AppleIDMockContainer(IMAGE, notifications=False) as apple:
        with pytest.raises(AppleIDMockError, match=r'^POST /__mock/sign-in answered 400: no user "dana" in the scenario \(field user\)$'):
            apple.mock.sign_in("dana", "com.example.app")


def test_container_ControlToken_GuardsTheControlApi(engine):
    from appleid_mock import AppleIDMock, AppleIDMockError
    from appleid_mock.testcontainers import AppleIDMockContainer
    token = "a-control-token-of-the-tests"
    with AppleIDMockContainer(IMAGE, control_token=token, notifications=False) as apple:
        assert apple.mock.advance_clock(60)["offset"] == 60
        stranger = AppleIDMock(apple.mock.url)
        with pytest.raises(AppleIDMockError, match=r"^POST /__mock/clock answered 401: "):
            stranger.advance_clock(60)
        assert stranger.health()["status"] == "ok", "health answers without the token"


def test_container_RefusedScenario_IsAnErrorWithTheMocksWords(engine):
    from appleid_mock import AppleIDMockError
    from appleid_mock.testcontainers import AppleIDMockContainer
    container = AppleIDMockContainer(IMAGE, scenario={"teams": 5}, notifications=False, timeout=30)
    with pytest.raises(AppleIDMockError) as refused:
        container.start()
    assert str(refused.value).splitlines()[0] == "the appleid-mock container exited before answering:"
    assert "teams: expected an array, found a number" in str(refused.value).splitlines()


def test_container_Skips_WithoutAnEngine(pytester, monkeypatch):
    """The twin of the others: with no engine named, the same tests skip and say why."""
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    quick_inner_runs(monkeypatch)
    pytester.makepyfile("""
        import os, pytest
        def test_needs_engine():
            if os.path.exists("/var/run/docker.sock"):
                pytest.skip("this machine has /var/run/docker.sock")
            from test_container import engine_or_skip
            engine_or_skip()
    """)
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED * no container engine: DOCKER_HOST is unset and /var/run/docker.sock does not exist *",
                                 ])
