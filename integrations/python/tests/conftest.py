"""The plugin's own tests: each writes a user's test file and conftest, runs pytest on them with
`pytester`, and checks the outcome and the words it printed. They need the appleid-mock binary
(APPLEID_MOCK_BIN, as scripts/test sets it)."""
import os
import pathlib

import pytest

pytest_plugins = ["pytester"]

ROOT = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("APPLEID_MOCK_BIN", str(ROOT / ".build" / "debug" / "appleid-mock"))


@pytest.fixture
def binary(monkeypatch):
    """The built binary, named by APPLEID_MOCK_BIN; the mock's other variables cleared."""
    if not os.access(BINARY, os.X_OK):
        pytest.fail(f"no appleid-mock binary at {BINARY}: build it (swift build) or set APPLEID_MOCK_BIN")
    for name in [n for n in os.environ if n.startswith("APPLEID_MOCK_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("APPLEID_MOCK_BIN", BINARY)
    quick_inner_runs(monkeypatch)
    return BINARY


def quick_inner_runs(monkeypatch):
    """pytester's runs load this plugin alone, not every plugin of the venv (the interop venv's
    schemathesis and hypothesis take seconds to import). test_package_FreshVirtualenv… loads it
    by its entry point, as a user's pytest does."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p appleid_mock.plugin")
