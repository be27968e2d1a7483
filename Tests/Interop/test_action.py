"""The GitHub Action (action.yml, report/action.yml) and the workflows: actionlint passes on them
(the action's metadata is checked through the workflows' `uses: ./`), shellcheck on the scripts
they run, and the one image name the docs, the action and the workflows use. Then the action's
start-up script itself, run here as a runner would (GITHUB_ENV, GITHUB_OUTPUT, inputs in INPUT_*),
against the image the tests build: scripts/oci-check runs that part through rootful podman's
Docker-compatible socket with the docker CLI; without an engine it skips, saying so."""
import json
import os
import pathlib
import re
import shutil
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from conftest import BINARY, ROOT

IMAGE_NAME = "ghcr.io/appleid-mock/appleid-mock"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint():
    found = shutil.which("actionlint", path=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if not found:
        pytest.fail("no actionlint: scripts/setup installs it from PyPI into the interop venv")
    return found


def lint(directory, *files):
    return subprocess.run([actionlint(), "-no-color", *files], cwd=directory, capture_output=True, text=True, timeout=120)


def test_actionlint_PassesTheWorkflowsAndTheActionsTheyUse():
    assert [w.name for w in WORKFLOWS] == ["action.yml", "release.yml"]
    result = lint(ROOT, *[str(w.relative_to(ROOT)) for w in WORKFLOWS])
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("file, change, error", [
    (".github/workflows/action.yml", ('          port: "8080"', '          porte: "8080"'),
     'input "porte" is not defined in action "AppleIDMock" defined at "./". available inputs are "control-token", "image", "port", "scenario", "tls", "version"'),
    ("action.yml", ("  using: composite", "  using: compost"), 'invalid runner name "compost" at runs.using in "AppleIDMock" action'),
    ("report/action.yml", ("    default: appleid-mock", "    defaul: appleid-mock"), 'line 11: unexpected key "defaul" for definition of input "container"'),
    (".github/workflows/release.yml", ('run: scripts/release "$VERSION"', 'run: scripts/release "${{ github.event.head_commit.message }}"'),
     '"github.event.head_commit.message" is potentially untrusted'),
])
def test_actionlint_RefusesTheTwins(tmp_path, file, change, error):
    # actionlint finds `uses: ./` from the repository root: a git work tree.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for part in ("action.yml", "report", ".github"):
        source = ROOT / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / part)
    target = tmp_path / file
    text = target.read_text()
    assert change[0] in text
    target.write_text(text.replace(change[0], change[1]))
    result = lint(tmp_path, *[str(w.relative_to(ROOT)) for w in WORKFLOWS])
    assert result.returncode == 1 and error in result.stdout, result.stdout + result.stderr


def test_shellcheck_PassesTheActionsScriptsAndTheReleaseScript():
    if not shutil.which("shellcheck"):
        pytest.fail("no shellcheck: scripts/setup installs Debian's shellcheck")
    result = subprocess.run(["shellcheck", "action/start", "action/report", "scripts/release"], cwd=ROOT, capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, "")


def test_imageName_IsOneNameEverywhere_AndNeverLatestAlone():
    files = [ROOT / "action.yml", ROOT / "action" / "start", ROOT / "scripts" / "release", *WORKFLOWS,
             ROOT / "docs" / "backend-ci.md", ROOT / "integrations" / "python" / "README.md",
             ROOT / "integrations" / "python" / "src" / "appleid_mock" / "testcontainers.py"]
    names = {}
    for path in files:
        for match in re.finditer(r"ghcr\.io/[\w.${}-]+/appleid-mock(:[\w.${}-]+)?", path.read_text()):
            names.setdefault(match.group(0).split(":")[0], set()).add(path.name)
            assert match.group(1) != ":latest", f"{path.name} names the image by latest"
    assert list(names) == [IMAGE_NAME], names


# ---- the start-up script, run here ----

def engine_or_skip():
    """The docker CLI (or podman's) and the image, else a skip naming what is missing."""
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        pytest.skip("no container engine: DOCKER_HOST is unset and /var/run/docker.sock does not exist "
                    "(scripts/oci-check runs this against rootful podman's socket)")
    cli = shutil.which("docker") or shutil.which("podman")
    if not cli:
        pytest.skip("no docker or podman CLI")
    if subprocess.run([cli, "version"], capture_output=True).returncode != 0:
        pytest.skip(f"no container engine: {cli} version fails")
    image = os.environ.get("APPLEID_MOCK_TEST_IMAGE")
    if not image:
        pytest.skip("APPLEID_MOCK_TEST_IMAGE names no AppleIDMock image (scripts/oci-check sets it)")
    return cli, image


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Runner:
    """A runner's files and environment around action/start and action/report."""

    def __init__(self, directory, cli, name):
        self.directory, self.cli, self.name = directory, cli, name
        self.env_file, self.output_file = directory / "github_env", directory / "github_output"
        self.env_file.touch()
        self.output_file.touch()

    def run(self, script, **inputs):
        env = dict(os.environ, DOCKER=self.cli, APPLEID_MOCK_CONTAINER=self.name, GITHUB_ENV=str(self.env_file),
                   GITHUB_OUTPUT=str(self.output_file), RUNNER_TEMP=str(self.directory))
        env.update({f"INPUT_{key.upper()}": value for key, value in inputs.items()})
        return subprocess.run([str(ROOT / "action" / script)], cwd=self.directory, env=env, capture_output=True, text=True, timeout=180)

    def exported(self):
        return dict(line.split("=", 1) for line in self.env_file.read_text().splitlines())

    def remove(self):
        subprocess.run([self.cli, "rm", "-f", self.name], capture_output=True)


@pytest.fixture
def runner(tmp_path):
    cli, image = engine_or_skip()
    runner = Runner(tmp_path, cli, f"appleid-mock-action-test-{os.getpid()}")
    runner.image = image
    yield runner
    runner.remove()


def fetch(url, ca=None, token=None, data=None):
    context = ssl.create_default_context(cafile=ca) if ca else None
    request = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}"} if token else {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_actionStart_ExportsAUrlThatAnswersHealth_WithTheScenarioCopiedIn(runner):
    scenario = json.loads(subprocess.run([BINARY, "scenario", "print"], capture_output=True, text=True, check=True).stdout)
    scenario["users"].append(dict(scenario["users"][0], id="dana", email="dana@example.com"))
    path = runner.directory / "scenario.json"
    path.write_text(json.dumps(scenario))
    path.chmod(0o600)
    port = str(free_port())
    started = runner.run("start", image=runner.image, scenario="scenario.json", port=port)
    assert started.returncode == 0, started.stdout + started.stderr
    url = f"http://127.0.0.1:{port}"
    assert runner.exported() == {"APPLEID_MOCK_URL": url, "APPLEID_MOCK_SERVER": url}
    assert runner.output_file.read_text() == f"url={url}\nca=\ncontainer={runner.name}\n"
    assert fetch(f"{url}/__mock/health") == (200, '{"active_kid":"W2ek7HdPaL","issuer":"https://appleid.apple.com","status":"ok"}')
    status, body = fetch(f"{url}/__mock/sign-in", data=b'{"user": "dana", "client_id": "com.example.app"}')
    assert (status, json.loads(body)["email"]) == (200, "dana@example.com")
    # The report: the refusal, in the mock's words.
    fetch(f"{url}/auth/token", data=b"")
    report = runner.run("report")
    assert report.returncode == 0
    assert "appleid-mock: refused POST /auth/token: " in report.stdout, report.stdout


def test_actionStart_FailsWithTheMocksWords_WhenTheScenarioIsRefused(runner):
    (runner.directory / "bad.json").write_text('{"teams": 5}')
    started = runner.run("start", image=runner.image, scenario="bad.json", port=str(free_port()))
    assert started.returncode == 1
    assert "teams: expected an array, found a number" in started.stderr, started.stderr
    assert "::error title=appleid-mock::the mock exited 2 before answering (its output is above)" in started.stderr
    assert runner.exported() == {}


def test_actionStart_RefusesBadInputs_BeforeStartingAnything(runner):
    for inputs, error in (({}, "give version (a release such as 0.2.0) or image"),
                          ({"version": "0.2.0", "image": "x"}, "give version or image, not both"),
                          ({"version": "latest"}, "version must be a release such as 0.2.0, got 'latest'"),
                          ({"image": "x", "port": "70000"}, "port must be 1 to 65535, got '70000'"),
                          ({"image": "x", "tls": "yes"}, "tls must be true or false, got 'yes'")):
        started = runner.run("start", **inputs)
        assert (started.returncode, started.stderr.strip()) == (1, f"::error title=appleid-mock::{error}" if "not both" not in error
                                                                  else f"::error title=appleid-mock::{error} (version '0.2.0', image 'x')")


def test_actionStart_ServesHttpsWithTheExportedCa_AndTheTokenGuardsControl(runner):
    port = str(free_port())
    token = "a-control-token-of-the-tests"
    # By release (the image scripts/release tagged) when oci-check made one, else by image.
    version = os.environ.get("APPLEID_MOCK_TEST_VERSION")
    chosen = {"version": version} if version else {"image": runner.image}
    started = runner.run("start", **chosen, port=port, tls="true", control_token=token)
    assert started.returncode == 0, started.stdout + started.stderr
    url = f"https://127.0.0.1:{port}"
    ca = str(runner.directory / "appleid-mock-ca.pem")
    assert runner.exported() == {"APPLEID_MOCK_URL": url, "APPLEID_MOCK_SERVER": url, "APPLEID_MOCK_CA": ca, "APPLEID_MOCK_CONTROL_TOKEN": token}
    assert f"::add-mask::{token}" in started.stdout
    assert fetch(f"{url}/__mock/health", ca=ca)[0] == 200
    assert fetch(f"{url}/__mock/clock", ca=ca)[0] == 401
    assert fetch(f"{url}/__mock/clock", ca=ca, token=token)[0] == 200
    # The twin: without the CA the certificate is not trusted.
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(f"{url}/__mock/health")


# ---- the start-up script's inputs, against a docker CLI that only records what it is asked ----

FAKE_DOCKER = """#!/bin/sh
# Records each call, one argument a line, a blank line after; inspect says the container runs.
printf '%s\\n' "$@" "" >> "$0.calls"
case "$1" in inspect) echo true ;; esac
"""


@pytest.fixture
def recorded(tmp_path):
    """A Runner whose docker is FAKE_DOCKER; `.calls()` lists the argument lists it was given."""
    cli = tmp_path / "docker"
    cli.write_text(FAKE_DOCKER)
    cli.chmod(0o755)
    runner = Runner(tmp_path, str(cli), "appleid-mock")
    calls_file = pathlib.Path(f"{cli}.calls")
    runner.calls = lambda: [call.split("\n") for call in calls_file.read_text().split("\n\n") if call] if calls_file.exists() else []
    return runner


def workflow_commands(text):
    """The lines of a step's output a runner would take as workflow commands."""
    return [line for line in text.splitlines() if line.startswith("::")]


@pytest.mark.parametrize("inputs, error", [
    ({"image": "--privileged"}, "image must not start with -, got '--privileged'"),
    ({"image": "img", "container": "-d"}, "the container's name (APPLEID_MOCK_CONTAINER) must not start with -, got '-d'"),
    ({"image": "ghcr.io/x/y:1 --privileged"}, "image must be one word with no spaces or control characters, got 'ghcr.io/x/y:1 --privileged'"),
    ({"image": "img\n::warning::injected"}, "image must be one word with no spaces or control characters, got 'img%0A::warning::injected'"),
    ({"version": "0.2.0\n::warning::injected"}, "version must be a release such as 0.2.0, got '0.2.0%0A::warning::injected'"),
])
def test_actionStart_RefusesANameThatWouldBeAnOption_BeforeAnyDockerCall(recorded, inputs, error):
    container = inputs.pop("container", None)
    if container:
        recorded.name = container
    started = recorded.run("start", **inputs)
    assert (started.returncode, workflow_commands(started.stderr), started.stdout) == (1, [f"::error title=appleid-mock::{error}"], "")
    assert recorded.calls() == []


def test_actionStart_PutsEveryNameAfterDoubleDash(recorded):
    # The twin: a name that is one, which reaches docker after the end of its options. (Nothing
    # listens on the port, so the start fails at its last check, here.)
    started = recorded.run("start", image="img", port=str(free_port()))
    assert started.returncode == 1 and "does not answer here" in started.stderr, started.stderr
    calls = recorded.calls()
    assert [call[0] for call in calls] == ["rm", "create", "start", "exec", "exec"]
    create = calls.pop(1)
    assert create[create.index("--"):] == ["--", "img", "serve"] and create[1:3] == ["--name", "appleid-mock"], create
    for call in calls:
        assert "--" in call and call.index("--") < call.index("appleid-mock"), call


@pytest.mark.parametrize("token", [
    "a-good-token-of-the-tests\n::warning::injected",
    "short",
    "a token with spaces in it",
    "x" * 513,
])
def test_actionStart_RefusesATokenTheMockWouldRefuse_BeforeMaskingIt_AndNeverShowsIt(recorded, token):
    started = recorded.run("start", image="img", control_token=token)
    error = ("::error title=appleid-mock::control-token must be 16 to 512 characters from A-Z a-z 0-9 - . _ ~ + / =, "
             f"as serve --control-token takes ({len(token)} characters given)")
    assert (started.returncode, workflow_commands(started.stdout), workflow_commands(started.stderr)) == (1, [], [error])
    assert "injected" not in started.stderr and recorded.calls() == []


def test_actionStart_MasksATokenTheMockTakes(recorded):
    # The twin: 16 characters of the alphabet, masked whole before anything else is printed.
    token = "A-z0.9_~+/=token"
    started = recorded.run("start", image="img", control_token=token, port=str(free_port()))
    assert workflow_commands(started.stdout) == [f"::add-mask::{token}"]
    assert "control-token" not in started.stderr


def test_actionReport_RefusesANameThatWouldBeAnOption_AndReadsOneThatIsNot(recorded):
    recorded.name = "--help"
    report = recorded.run("report")
    assert (report.returncode, report.stdout, recorded.calls()) == (
        0, "appleid-mock report: the container's name (APPLEID_MOCK_CONTAINER) must be one word that does not start with -, got --help\n", [])
    recorded.name = "appleid-mock"
    assert recorded.run("report").returncode == 0
    assert [call[:2] for call in recorded.calls()] == [["inspect", "--"], ["logs", "--"], ["exec", "--"], ["exec", "--"], ["exec", "--"], ["logs", "--tail"]]


@pytest.mark.parametrize("arguments, error", [
    (["latest"], "release: VERSION must be MAJOR.MINOR.PATCH[-PRERELEASE] (e.g. 0.2.0), got 'latest'"),
    (["0.2"], "release: VERSION must be MAJOR.MINOR.PATCH[-PRERELEASE] (e.g. 0.2.0), got '0.2'"),
    (["0.2.0;rm"], "release: VERSION must be MAJOR.MINOR.PATCH[-PRERELEASE] (e.g. 0.2.0), got '0.2.0;rm'"),
    (["0.2.0", "--engine", "lxc"], "release: --engine is docker or podman, got 'lxc'"),
])
def test_release_RefusesWhatIsNoRelease_BeforeBuilding(arguments, error):
    """The twins of scripts/oci-check's `scripts/release 0.2.0`, which builds and checks a release."""
    result = subprocess.run([str(ROOT / "scripts" / "release"), *arguments], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr.strip()) == (2, error)
