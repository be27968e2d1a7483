"""Starting `appleid-mock serve` as a child process: the binary found, a free port, the scenario
written with the notification receiver wired in, health awaited, stderr kept for errors, and the
process stopped on every way out: a failed start, `stop()`, the interpreter's exit and SIGTERM."""
import atexit
import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading

from .mock import AppleIDMock, AppleIDMockError

# How many of the mock's stderr lines are kept (the newest).
STDERR_LINES = 2000


def find_binary(explicit=None, checkout=None):
    """The appleid-mock binary: `explicit` (an option or APPLEID_MOCK_BIN), else a build in the
    AppleIDMock `checkout` (`swift build --product appleid-mock` there), else `appleid-mock` on
    PATH. Raises AppleIDMockError naming every place it looked."""
    if explicit:
        path = pathlib.Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AppleIDMockError(f"the appleid-mock binary {explicit} is not an executable file")
        return str(path)
    if checkout:
        checkout = pathlib.Path(checkout).expanduser()
        if not (checkout / "Package.swift").is_file():
            raise AppleIDMockError(f"appleid_mock_checkout {checkout} has no Package.swift (an AppleIDMock checkout is wanted)")
        build = subprocess.run(["swift", "build", "--product", "appleid-mock"], cwd=checkout, capture_output=True, text=True)
        if build.returncode != 0:
            raise AppleIDMockError(f"swift build --product appleid-mock in {checkout} failed:\n{(build.stdout + build.stderr)[-3000:]}")
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=checkout, capture_output=True, text=True, check=True)
        return str(pathlib.Path(bin_path.stdout.strip()) / "appleid-mock")
    found = shutil.which("appleid-mock")
    if found:
        return found
    raise AppleIDMockError("no appleid-mock binary: give --appleid-mock-bin, APPLEID_MOCK_BIN, the ini option "
                           "appleid_mock_bin or appleid_mock_checkout, or put appleid-mock on PATH")


def wire_receiver(scenario, url):
    """A copy of `scenario` whose teams without a `notification_url` send theirs to `url`."""
    wired = json.loads(json.dumps(scenario))
    teams = wired.get("teams") if isinstance(wired, dict) else None
    # A malformed scenario goes to the mock as it is: its refusal says what is wrong.
    for team in teams if isinstance(teams, list) else []:
        if isinstance(team, dict) and not team.get("notification_url"):
            team["notification_url"] = url
    return wired


def load_scenario(binary, scenario):
    """The scenario as a dict: `scenario` itself (a dict), the file it names, or the built-in one
    (`appleid-mock scenario print`) for None."""
    if isinstance(scenario, dict):
        return scenario
    if scenario is None:
        printed = subprocess.run([binary, "scenario", "print"], capture_output=True, text=True)
        if printed.returncode != 0:
            raise AppleIDMockError(f"{binary} scenario print exited {printed.returncode}: {printed.stderr.strip()}")
        return json.loads(printed.stdout)
    try:
        return json.loads(pathlib.Path(scenario).read_text())
    except (OSError, ValueError) as error:
        raise AppleIDMockError(f"scenario {scenario}: {error}") from None


# The mocks started and not yet stopped. A cancelled CI job sends SIGTERM, whose default ends
# Python without running a `finally` or a fixture's teardown; atexit does not run then either.
_running = set()
_running_lock = threading.RLock()  # re-entrant: the SIGTERM handler may run while this thread holds it
_handler_installed = False


def _stop_running():
    with _running_lock:
        running = list(_running)
    for process in running:
        process.stop(timeout=5)


def _on_sigterm(previous):
    def handler(signum, frame):
        _stop_running()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            # What SIGTERM would have done: the process ends by the signal (status 143 to a shell).
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
    return handler


def _watch(process):
    """Stops `process` at exit and on SIGTERM, if it is still running then."""
    global _handler_installed
    with _running_lock:
        _running.add(process)
        if _handler_installed:
            return
        _handler_installed = True
    atexit.register(_stop_running)
    # Only the main thread may set a handler; the previous one runs after the mocks are stopped.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm(signal.getsignal(signal.SIGTERM)))


class MockProcess:
    """`appleid-mock serve --port PORT --scenario FILE [serve_args…]` (port 0: a free one),
    running until `stop()`."""

    def __init__(self, binary, scenario_path, serve_args=(), *, port=0, url=None, ca=None, control_token=None, scenario=None,
                 cwd=None, timeout=30):
        command = [binary, "serve", "--port", str(port), "--scenario", str(scenario_path), *serve_args]
        environment = dict(os.environ)
        # The mock's own variables from the developer's shell would change what is served.
        for name in [n for n in environment if n.startswith("APPLEID_MOCK_")]:
            del environment[name]
        if control_token:
            environment["APPLEID_MOCK_CONTROL_TOKEN"] = control_token
        self.command = command
        self.process = subprocess.Popen(command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._stderr = collections.deque(maxlen=STDERR_LINES)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_stderr, name="appleid-mock stderr", daemon=True)
        self._reader.start()
        _watch(self)
        try:
            line = self.process.stdout.readline().strip()
            if not line.startswith("listening on "):
                self.process.wait(timeout=timeout)
                self._reader.join(timeout=5)
                raise AppleIDMockError(f"appleid-mock serve exited {self.process.returncode} before listening "
                                       f"({' '.join(command)}):\n" + "\n".join(self.stderr_lines()))
            self.listening = line.removeprefix("listening on ")
            self.mock = AppleIDMock(url or self.listening, ca=ca, control_token=control_token, scenario=scenario,
                                    logs=self.stderr_lines, timeout=timeout)
            self.mock.wait_until_healthy(timeout, alive=self._alive)
        except BaseException:
            # A mock that never became healthy (an https one checked without its CA, say) is
            # stopped here: the caller gets no object to stop.
            self.stop(timeout=5)
            raise

    def _read_stderr(self):
        for line in self.process.stderr:
            with self._lock:
                self._stderr.append(line.rstrip("\n"))

    def stderr_lines(self):
        """The mock's stderr lines so far (the newest 2,000)."""
        with self._lock:
            return list(self._stderr)

    def _alive(self):
        if self.process.poll() is not None:
            self._reader.join(timeout=5)
            raise AppleIDMockError(f"appleid-mock exited {self.process.returncode}:\n" + "\n".join(self.stderr_lines()))

    def stop(self, timeout=20):
        """SIGTERM, then the exit status (0 for a clean stop); SIGKILL after `timeout` s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with _running_lock:
            _running.discard(self)
        self.process.stdout.close()
        self._reader.join(timeout=5)
        return self.process.returncode
