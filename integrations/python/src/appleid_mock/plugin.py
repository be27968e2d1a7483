"""The pytest plugin (entry point `appleid_mock`): the fixtures `appleid_mock` (session),
`appleid_mock_reset` (opt-in, per test) and `apple_notifications`, their options, and a report
section naming what the mock refused, and why, when a test that used it fails."""
import dataclasses
import json
import os
import pathlib

import pytest

from .mock import AppleIDMock, AppleIDMockError
from .notifications import AppleNotifications, NotificationReceiver
from .process import MockProcess, find_binary, load_scenario, wire_receiver


@dataclasses.dataclass(frozen=True)
class MockSettings:
    """How the session's mock is had. Override the `appleid_mock_settings` fixture in a conftest
    (it may take the plugin's own as its argument and `.replace(...)` fields) for what the
    options do not say."""

    binary: str = None            # the appleid-mock binary (None: APPLEID_MOCK_BIN, then PATH)
    checkout: str = None          # or an AppleIDMock checkout to build it in
    scenario: object = None       # a scenario file, a dict, or None for the built-in one
    serve_args: tuple = ()        # more `serve` arguments (--seed 7, --tls-cert …, --base-url …)
    port: int = 0                 # the port it listens on (0: a free one)
    url: str = None               # a mock already running there: use it, start none
    image: str = None             # or run this image with Testcontainers (the testcontainers extra)
    ca: str = None                # the CA an https mock is checked against
    control_token: str = None     # the mock's --control-token
    notifications: bool = True    # wire the notification receiver into the scenario
    timeout: float = 30           # seconds for start-up and for each control call

    def replace(self, **changes):
        """A copy with `changes`."""
        return dataclasses.replace(self, **changes)


OPTIONS = [
    # (name, ini name, environment variable, help)
    ("bin", "appleid_mock_bin", "APPLEID_MOCK_BIN", "the appleid-mock binary (default: APPLEID_MOCK_BIN, then PATH)"),
    ("checkout", "appleid_mock_checkout", None, "an AppleIDMock checkout: build the binary there with swift build"),
    ("scenario", "appleid_mock_scenario", None, "the scenario file the session's mock serves (default: the built-in one)"),
    ("url", "appleid_mock_url", "APPLEID_MOCK_URL", "use the mock already running at URL instead of starting one"),
    ("image", "appleid_mock_image", "APPLEID_MOCK_IMAGE", "run this AppleIDMock image with Testcontainers instead of the binary"),
    ("ca", "appleid_mock_ca", "APPLEID_MOCK_CA", "the CA an https mock is checked against"),
    ("control-token", "appleid_mock_control_token", "APPLEID_MOCK_CONTROL_TOKEN", "the mock's --control-token"),
]


def pytest_addoption(parser):
    group = parser.getgroup("appleid-mock", "AppleIDMock, a local Sign in with Apple server")
    for name, ini, variable, help in OPTIONS:
        group.addoption(f"--appleid-mock-{name}", dest=ini, default=None,
                        help=help + (f" [env {variable}; ini {ini}]" if variable else f" [ini {ini}]"))
        parser.addini(ini, help)
    parser.addini("appleid_mock_args", "more arguments for appleid-mock serve (e.g. --seed 7)", type="args")


def _setting(config, ini, variable):
    """Command line, then the environment, then the ini file (paths relative to it)."""
    value = config.getoption(ini)
    if value:
        return value
    if variable and os.environ.get(variable):
        return os.environ[variable]
    value = config.getini(ini)
    if value and ini in ("appleid_mock_bin", "appleid_mock_checkout", "appleid_mock_scenario", "appleid_mock_ca") and config.inipath:
        value = str((config.inipath.parent / value).resolve())
    return value or None


@pytest.fixture(scope="session")
def appleid_mock_settings(pytestconfig):
    """The session mock's settings, from the options; override in a conftest to change them."""
    get = {ini: _setting(pytestconfig, ini, variable) for _, ini, variable, _ in OPTIONS}
    return MockSettings(binary=get["appleid_mock_bin"], checkout=get["appleid_mock_checkout"],
                        scenario=get["appleid_mock_scenario"], serve_args=tuple(pytestconfig.getini("appleid_mock_args")),
                        url=get["appleid_mock_url"], image=get["appleid_mock_image"], ca=get["appleid_mock_ca"], control_token=get["appleid_mock_control_token"])


class _Session:
    """The session's mock, and the receiver wired into its scenario (None for a mock started
    elsewhere)."""

    def __init__(self, mock, receiver, process):
        self.mock, self.receiver, self.process = mock, receiver, process


@pytest.fixture(scope="session")
def _appleid_mock_session(appleid_mock_settings, tmp_path_factory):
    settings = appleid_mock_settings
    if settings.url:
        scenario = settings.scenario
        if scenario is not None and not isinstance(scenario, dict):
            scenario = json.loads(pathlib.Path(scenario).read_text())
        mock = AppleIDMock(settings.url, ca=settings.ca, control_token=settings.control_token, scenario=scenario,
                           timeout=settings.timeout)
        mock.wait_until_healthy(settings.timeout)
        yield _Session(mock, None, None)
        return
    if settings.image:
        from .testcontainers import AppleIDMockContainer
        container = AppleIDMockContainer(settings.image, settings.scenario, settings.control_token,
                                         notifications=settings.notifications, timeout=settings.timeout)
        container.start()
        try:
            yield _Session(container.mock, container.receiver, None)
        finally:
            container.stop()
        return
    binary = find_binary(settings.binary, settings.checkout)
    scenario = load_scenario(binary, settings.scenario)
    receiver = NotificationReceiver() if settings.notifications else None
    if receiver:
        scenario = wire_receiver(scenario, receiver.url)
    path = tmp_path_factory.mktemp("appleid-mock") / "scenario.json"
    path.write_text(json.dumps(scenario, indent=2))
    try:
        process = MockProcess(binary, path, settings.serve_args, port=settings.port, ca=settings.ca, control_token=settings.control_token,
                              scenario=scenario, timeout=settings.timeout)
    except BaseException:
        if receiver:
            receiver.stop()
        raise
    try:
        if receiver:
            receiver.attach(process.mock)
        yield _Session(process.mock, receiver, process)
    finally:
        status = process.stop()
        if receiver:
            receiver.stop()
        if status != 0:
            raise AppleIDMockError(f"appleid-mock exited {status} when stopped:\n" + "\n".join(process.stderr_lines()[-20:]))


@pytest.fixture(scope="session")
def appleid_mock(_appleid_mock_session):
    """The session's running appleid-mock (`AppleIDMock`): started from the binary on a free port
    with the scenario (or from the image with Testcontainers, or the one at APPLEID_MOCK_URL),
    healthy, stopped at the end."""
    return _appleid_mock_session.mock


@pytest.fixture
def appleid_mock_reset(appleid_mock):
    """The session's mock, reset to the scenario's start before this test."""
    appleid_mock.reset()
    return appleid_mock


@pytest.fixture
def apple_notifications(_appleid_mock_session):
    """The notifications the mock sends from now on, verified: `apple_notifications.next()`."""
    session = _appleid_mock_session
    if session.receiver is None:
        raise AppleIDMockError("apple_notifications: the session's mock was started elsewhere (appleid_mock_url) or with "
                               "notifications=False, so no receiver is wired into its scenario")
    teams = (session.mock.scenario or {}).get("teams") or []
    if not any(team.get("notification_url") == session.receiver.url for team in teams):
        raise AppleIDMockError("apple_notifications: every team of the scenario names its own notification_url, "
                               "so none sends notifications to the receiver")
    return AppleNotifications(session.receiver)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    mock = getattr(item, "funcargs", {}).get("appleid_mock") or getattr(item, "funcargs", {}).get("appleid_mock_reset")
    if isinstance(mock, AppleIDMock):
        item._appleid_mock_mark = (mock, mock.journal_mark(), len(mock.logs()))
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    mark = getattr(item, "_appleid_mock_mark", None)
    if report.when != "call" or not report.failed or mark is None:
        return
    mock, after, lines = mark
    refused = mock.refusals(after)
    text = "\n".join(refused) if refused else "(none)"
    logs = mock.logs()[lines:]
    if logs:
        text += "\n\nits stderr meanwhile:\n" + "\n".join(logs[-50:])
    report.sections.append(("appleid-mock: requests it refused during the test", text))
