"""Every code block of README.md, docs/*.md, CONTRIBUTING.md, Examples/python-backend/README.md and
integrations/{python,node,go,java}/README.md runs, compiles or is exempted by name, so none can rot.

Each fenced block is preceded by a marker comment that says what the test does with it:

    <!-- readme: run -->               bash, on its own (it starts what it needs)
    <!-- readme: run with-mock -->     bash, with `appleid-mock serve` already on :8080
    <!-- readme: run continued -->     bash, in the session of the block before (its background
                                       processes still running, its variables set)
    <!-- readme: python continued -->  Python (PyJWT, requests), in the session of the block before
    <!-- readme: pytest continued -->  a pytest file, run with `python -m pytest` in the session of the
                                       block before (its tests must pass, and at least one must run)
    <!-- readme: pytest -->            a pytest file on its own (the appleid-mock plugin installed,
                                       the built binary on PATH)
    <!-- readme: node-test -->         a `node --test` file on its own, in a fresh npm project with this
                                       checkout's Node kit installed from its `npm pack` tarball (the built
                                       binary on PATH): its test must pass
    <!-- readme: go-test -->           a Go test file on its own, in a fresh module that requires this
                                       checkout's Go kit (replace to integrations/go; no proxy): `go test`
                                       must pass
    <!-- readme: java-test -->         a JUnit 5 test class on its own, compiled with javac against the Java
                                       kit's jar (integrations/java/run-tests --jar) and Debian's junit5, and
                                       run with JUnit's console launcher: it must pass
    <!-- readme: pytest needs-engine --> the same, where a container engine answers (DOCKER_HOST):
                                       scripts/oci-check runs these with the images it built; elsewhere
                                       they skip, saying so
    <!-- readme: workflow -->          a GitHub Actions workflow: actionlint passes on it, with this
                                       repository's action (and report) in place of the published one
    <!-- readme: compose -->           a Compose file: valid against the Compose schema; where
                                       APPLEID_MOCK_TEST_COMPOSE names podman-compose (scripts/oci-check),
                                       also brought up (its services healthy, its ports answering) and down
    <!-- readme: ini -->               a pytest ini file: it parses, and names only the plugin's options
    <!-- readme: synopsis -->          the CLI synopsis: it must name every option of every command
    <!-- readme: swift-package -->     an outside package's XCTest that depends on this one
    <!-- readme: yaml -->              parsed as YAML
    <!-- readme: not-run REASON -->    shown only; REASON says why and what covers it instead

A block without a marker fails the suite. In `run` blocks, a line `# → TEXT` states what the
commands before it print: the output must contain each TEXT in order (`…` stands for anything).
Blocks run from the repository root with the built `appleid-mock` first on PATH; what they
write goes to `.appleid-mock/` (gitignored), removed afterwards unless it was there before.
"""
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import BINARY, ROOT

README = ROOT / "README.md"
# Every document whose code blocks users copy: the README, every page under docs/, CONTRIBUTING.md,
# the example's README and the Python, Node, Go and Java integrations' (each once, in this order).
DOCUMENTS = list(dict.fromkeys([README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "CONTRIBUTING.md",
                                ROOT / "Examples" / "python-backend" / "README.md", ROOT / "integrations" / "python" / "README.md",
                                ROOT / "integrations" / "node" / "README.md", ROOT / "integrations" / "go" / "README.md",
                                ROOT / "integrations" / "java" / "README.md"]))
SCRATCH = ROOT / ".appleid-mock"
MARKER = re.compile(r"^<!-- readme: (run|run with-mock|run continued|python continued|pytest continued|pytest|pytest needs-engine|"
                    r"node-test|go-test|java-test|workflow|compose|ini|swift-package|yaml|synopsis|not-run (?P<reason>.+?)) -->$")
FENCE = re.compile(r"^(?P<fence>```+)(?P<lang>[\w+-]*)\s*$")
WALKTHROUGH_PORTS = (8080, 9000)


class Block:
    def __init__(self, kind, lang, line, text, reason=None, document="README.md"):
        self.kind, self.lang, self.line, self.text, self.reason, self.document = kind, lang, line, text, reason, document

    def __repr__(self):
        return f"{self.document}:{self.line} ({self.lang or 'text'}, {self.kind})"


def blocks(path=README):
    """The fenced blocks of `path` with their markers, in order."""
    lines = path.read_text().splitlines()
    found, index, marker = [], 0, None
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if fence:
            start, body = index + 1, []
            index += 1
            while index < len(lines) and lines[index] != fence.group("fence"):
                body.append(lines[index])
                index += 1
            if index == len(lines):
                raise AssertionError(f"{path.name}:{start}: the block never closes")
            reason = marker.group("reason") if marker else None
            kind = ("not-run" if reason else marker.group(1)) if marker else None
            document = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
            found.append(Block(kind, fence.group("lang"), start, "\n".join(body) + "\n", reason, document))
            marker = None
        elif line.strip():
            marker = MARKER.match(line.strip())
        index += 1
    return found


ALL = [block for document in DOCUMENTS for block in blocks(document)]


def of_kind(*kinds):
    return [block for block in ALL if block.kind in kinds]


def expectations(text):
    return [line.split("# → ", 1)[1].strip() for line in text.splitlines() if line.lstrip().startswith("# → ")]


def assert_printed(output, wanted, block):
    """Each wanted text in the output, in order; except that a line of a running mock's own
    (`appleid-mock: …`, which its writer thread puts on stderr in its own time) only has to come
    after what was wanted before it, not before what is wanted next."""
    position = 0
    for text in wanted:
        pattern = ".*?".join(re.escape(part) for part in text.split("…"))
        found = re.compile(pattern, re.S).search(output, position)
        assert found, f"{block}: expected the output to contain {text!r} (in order); it was:\n{output}"
        if not text.startswith("appleid-mock: "):
            position = found.end()


def test_readme_expected_output_is_in_order_but_for_the_mocks_own_stderr_lines():
    wanted = ["verified", "appleid-mock: refused POST /auth/token: invalid_request — …", '{"error":"invalid_request"}']
    assert_printed('verified\n{"error":"invalid_request"}appleid-mock: refused POST /auth/token: invalid_request — why\n', wanted, "late")
    assert_printed('verified\nappleid-mock: refused POST /auth/token: invalid_request — why\n{"error":"invalid_request"}\n', wanted, "early")
    # Twins: a line of the mock's before what was wanted before it, and stdout out of order, are refused.
    with pytest.raises(AssertionError):
        assert_printed('appleid-mock: refused POST /auth/token: invalid_request — why\nverified\n{"error":"invalid_request"}\n', wanted, "before")
    with pytest.raises(AssertionError):
        assert_printed('{"error":"invalid_request"}\nverified\n', ["verified", '{"error":"invalid_request"}'], "swapped")


def port_free(port):
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def scratch():
    existed = SCRATCH.exists()
    busy = [port for port in WALKTHROUGH_PORTS if not port_free(port)]
    if busy:
        pytest.fail(f"the README's commands use ports {WALKTHROUGH_PORTS}, and {busy} are taken on 127.0.0.1")
    yield
    if not existed:
        shutil.rmtree(SCRATCH, ignore_errors=True)


def environment():
    env = dict(os.environ)
    env["PATH"] = f"{pathlib.Path(BINARY).parent}{os.pathsep}{env['PATH']}"
    env["PYTHON"] = sys.executable
    env.pop("APPLEID_MOCK_SERVER", None)
    return env


class BackgroundMock:
    """`appleid-mock serve` on :8080 with the built-in scenario, as the README assumes."""

    def __init__(self):
        self.process = subprocess.Popen([BINARY, "serve"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if line != "listening on http://127.0.0.1:8080":
            self.process.kill()
            raise AssertionError(f"serve printed {line!r}: {self.process.stderr.read()}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=20) == 0


def run_in_group(command, block, stdin_text=None, timeout=240):
    """Runs `command` in its own process group and kills whatever it left running."""
    process = subprocess.Popen(command, cwd=ROOT, env=environment(), stdin=subprocess.PIPE if stdin_text else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(f"{block}: still running after {timeout} s; output:\n{output}")
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    return process.returncode, output


def test_readme_every_block_says_what_the_tests_do_with_it():
    assert ALL, "README.md has no code blocks"
    assert {block.document for block in ALL} >= {"README.md", "docs/getting-started.md", "docs/cli.md"}, "a document is not read"
    unmarked = [block for block in ALL if block.kind is None]
    assert not unmarked, f"blocks without a `<!-- readme: … -->` marker: {unmarked}"
    for block in of_kind("not-run"):
        assert len(block.reason) >= 10, f"{block}: say why it is not run, and what covers it"


NEEDS_A_MOCK = "# needs a mock serving on 8080: appleid-mock serve &   (kill %1 stops it)"


def test_readme_every_block_the_tests_run_beside_a_mock_says_so_in_its_first_line():
    # Pasted in order, a block that needs a mock may come after one that stopped it (newcomer P6):
    # its first line says what it needs. The twin: no other block says it.
    with_mock = of_kind("run with-mock")
    assert len(with_mock) >= 7
    assert [block for block in with_mock if block.text.splitlines()[0] != NEEDS_A_MOCK] == []
    assert [block for block in ALL if block.kind != "run with-mock" and NEEDS_A_MOCK in block.text] == []


def test_readme_marker_parser_refuses_an_unmarked_block(tmp_path):
    sample = tmp_path / "README.md"
    sample.write_text("<!-- readme: run -->\n```sh\necho hi\n```\n\ntext\n\n```sh\necho unmarked\n```\n")
    kinds = [block.kind for block in blocks(sample)]
    assert kinds == ["run", None]


def test_readme_expectations_fail_when_the_output_differs():
    block = Block("run", "sh", 1, "")
    assert_printed('{"error":"invalid_grant"}', ['{"error":"invalid_…"}'], block)
    with pytest.raises(AssertionError):
        assert_printed('{"error":"invalid_client"}', ['{"error":"invalid_grant"}'], block)
    with pytest.raises(AssertionError):
        assert_printed("b a", ["a", "b"], block)


LEFT_RUNNING = "still running when the blocks ended"


class Session:
    """A `run` or `run with-mock` block and the `continued` blocks after it: one bash script."""

    def __init__(self, first):
        self.blocks = [first]

    def __repr__(self):
        return repr(self.blocks[0]) + (f" + {len(self.blocks) - 1} continued" if len(self.blocks) > 1 else "")

    @property
    def with_mock(self):
        return self.blocks[0].kind == "run with-mock"

    def script(self):
        # What the blocks leave running in the background (a mock, a listener) ends with them.
        parts = ["trap 'status=$?; kill $(jobs -p) 2>/dev/null || true; wait || true; exit $status' EXIT\n"]
        for number, block in enumerate(self.blocks):
            if block.kind == "python continued":
                parts.append(f'"$PYTHON" - <<\'README_PYTHON_{number}\'\n{block.text}README_PYTHON_{number}\n')
            elif block.kind in ("pytest continued", "pytest"):
                # As a user's suite runs it: a test file of its own, collected by pytest.
                file = f".appleid-mock/test_readme_block_{number}.py"
                parts.append(f"mkdir -p .appleid-mock\ncat > {file} <<'README_PYTEST_{number}'\n{block.text}README_PYTEST_{number}\n"
                             f'"$PYTHON" -m pytest -q -p no:cacheprovider {file}\n')
            else:
                parts.append(block.text)
        # Each recipe stops what it starts, so the blocks pasted in order into one shell never meet
        # a mock left on a port by the block before (given a moment to exit after its SIGTERM).
        parts.append(f"for _ in $(seq 50); do [ -z \"$(jobs -rp)\" ] && break; sleep 0.1; done\n"
                     f"if [ -n \"$(jobs -rp)\" ]; then echo \"{LEFT_RUNNING}: $(jobs -r)\"; fi\n")
        return "".join(parts)

    def expectations(self):
        return [text for block in self.blocks for text in expectations(block.text)]


def sessions():
    found = []
    for block in ALL:
        if block.kind in ("run", "run with-mock", "pytest"):
            found.append(Session(block))
        elif block.kind in ("run continued", "python continued", "pytest continued"):
            assert found and found[-1].blocks[0].document == block.document, f"{block} continues no session of its document"
            found[-1].blocks.append(block)
    return found


@pytest.mark.parametrize("session", sessions(), ids=repr)
def test_readme_shell_session_runs(session, scratch):
    SCRATCH.mkdir(exist_ok=True)
    mock = BackgroundMock() if session.with_mock else None
    try:
        status, output = run_in_group(["bash", "-euo", "pipefail", "-c", session.script()], session)
    finally:
        if mock:
            mock.stop()
    assert status == 0, f"{session} exited {status}:\n{output}"
    assert LEFT_RUNNING not in output, f"{session} does not stop what it starts (a recipe must):\n{output}"
    skipped = re.search(r"SKIPPED — (.+)", output)
    if skipped:
        # A block that cannot run on this machine says so itself (root, namespaces), and exits 0.
        pytest.skip(f"{session}: {skipped.group(1)}")
    assert_printed(output, session.expectations(), session)


def test_readme_session_that_leaves_a_process_running_is_caught():
    left = Session(Block("run", "sh", 1, "sleep 30 &\n"))
    _, output = run_in_group(["bash", "-euo", "pipefail", "-c", left.script()], left)
    assert LEFT_RUNNING in output
    # The twin: a block that stops what it started.
    stopped = Session(Block("run", "sh", 1, "sleep 30 &\nkill %1\n"))
    _, output = run_in_group(["bash", "-euo", "pipefail", "-c", stopped.script()], stopped)
    assert LEFT_RUNNING not in output, output


def help_options(text):
    """The options a `--help` text defines: those of its usage lines (up to the first blank line)
    and of lines that start with an option; prose that mentions other tools' flags is not one."""
    usage = text.split("\n\n", 1)[0]
    defined = "\n".join(re.split(r"\s{2,}", line.strip())[0] for line in text.splitlines() if re.match(r"^\s+--[a-z]", line))
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", usage + "\n" + defined))


def test_readme_help_options_are_read_from_usage_and_option_lines_only():
    text = "usage: tool run --out DIR [--force]\n\n  --out DIR   where (see curl --cacert)\n  --days N    validity\nUse --other in prose.\n"
    assert help_options(text) == {"--out", "--force", "--days"}


def test_readme_synopsis_names_every_option_of_every_command():
    synopsis = of_kind("synopsis")
    assert len(synopsis) == 1, f"expected one synopsis block, found {synopsis}"
    commands = [[], ["serve"], ["client-secret"], ["keys", "generate"], ["keys"], ["tls", "generate"], ["scenario"],
                ["sign-in"], ["token"], ["audit"], ["clock"], ["reset"], ["faults"], ["event"], ["events"], ["requests"], ["mail"], ["health"],
                ["notifications", "listen"]]
    missing = []
    for command in commands:
        result = subprocess.run([BINARY, *command, "--help"], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"{command} --help exited {result.returncode}: {result.stderr}"
        for option in sorted(help_options(result.stdout)):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", synopsis[0].text):
                missing.append(f"{' '.join(command) or 'appleid-mock'} {option}")
    assert not missing, f"the synopsis ({synopsis[0].document}:{synopsis[0].line}) lacks: {missing}"


@pytest.mark.parametrize("block", of_kind("yaml"), ids=repr)
def test_readme_yaml_block_parses(block):
    import yaml
    assert isinstance(yaml.safe_load(block.text), dict), f"{block} is not a YAML mapping"


def test_readme_swift_example_runs_as_an_outside_packages_test():
    """The Swift block, verbatim, as the test of a package that depends on this one by path."""
    swift = of_kind("swift-package")
    assert len(swift) == 1, f"expected one swift-package block, found {swift}"
    consumer = ROOT / ".build" / "readme-consumer"
    tests = consumer / "Tests" / "ReadmeExampleTests"
    tests.mkdir(parents=True, exist_ok=True)
    identity = ROOT.name.lower()
    (consumer / "Package.swift").write_text(f"""// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ReadmeConsumer",
    dependencies: [.package(path: "{ROOT}")],
    targets: [
        .testTarget(name: "ReadmeExampleTests", dependencies: [.product(name: "AppleIDMock", package: "{identity}")]),
    ]
)
""")
    (tests / "ReadmeExampleTests.swift").write_text(swift[0].text)
    result = subprocess.run(["swift", "test"], cwd=consumer, capture_output=True, text=True, timeout=1200)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{swift[0]}: swift test exited {result.returncode}:\n{output[-6000:]}"
    executed = re.findall(r"Executed (\d+) tests?, with 0 failures", output)
    assert executed and int(executed[-1]) >= 1, f"{swift[0]}: no test ran:\n{output[-3000:]}"


# ---- the Node kit's blocks, in a fresh project as a user's ----

NODE_KIT = ROOT / "integrations" / "node"


@pytest.fixture(scope="module")
def node_project(tmp_path_factory):
    """A fresh npm project with the kit installed as users get it: `npm pack` of the checkout's
    integrations/node (only what its package.json ships), installed with no registry."""
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            pytest.fail(f"no {tool}: scripts/setup installs nodejs (and npm) for the kits")
    project = tmp_path_factory.mktemp("node-project")
    packed = subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(project), str(NODE_KIT)],
                            capture_output=True, text=True, timeout=120)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    tarball = project / packed.stdout.strip().splitlines()[-1]
    (project / "package.json").write_text('{"name": "readme-consumer", "private": true, "type": "module"}\n')
    installed = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--silent", str(tarball)],
                               cwd=project, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return project


def run_node_test(project, text, env):
    (project / "readme.test.mjs").write_text(text)
    env = {name: value for name, value in env.items() if name != "NODE_TEST_CONTEXT"}
    result = subprocess.run(["node", "--test", "readme.test.mjs"], cwd=project, env=env, capture_output=True, text=True, timeout=240)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("block", of_kind("node-test"), ids=repr)
def test_readme_node_block_passes_in_a_fresh_project_with_the_packed_kit(block, node_project):
    env = {name: value for name, value in environment().items() if name != "APPLEID_MOCK_BIN"}
    status, output = run_node_test(node_project, block.text, env)
    assert status == 0 and re.search(r"^# pass [1-9]", output, re.M) and re.search(r"^# fail 0$", output, re.M), f"{block}:\n{output}"
    # The twin: the same file where the binary is not, failing with the kit's own words.
    status, output = run_node_test(node_project, block.text, {**env, "APPLEID_MOCK_BIN": "/nonexistent/appleid-mock"})
    assert status == 1 and "the appleid-mock binary /nonexistent/appleid-mock is not an executable file" in output, f"{block}:\n{output}"


def test_readme_node_kit_has_its_ten_line_test():
    assert [block.document for block in of_kind("node-test")] == ["integrations/node/README.md"]


# ---- the Go kit's blocks, in a fresh module as a user's ----

GO_KIT = ROOT / "integrations" / "go"
GO_MODULE = "github.com/appleid-mock/appleid-mock/integrations/go"


def run_go_test(module, text, env):
    (module / "readme_test.go").write_text(text)
    env = {**env, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    result = subprocess.run(["go", "test", "-count=1", "./..."], cwd=module, env=env, capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("block", of_kind("go-test"), ids=repr)
def test_readme_go_block_passes_in_a_fresh_module_that_requires_the_kit(block, tmp_path):
    if not shutil.which("go"):
        pytest.fail("no go: scripts/setup installs golang-go for the kits")
    # The README's install: a require of the kit and a replace pointing at the checkout.
    (tmp_path / "go.mod").write_text(f"module readme\n\ngo 1.19\n\nrequire {GO_MODULE} v0.0.0\n\nreplace {GO_MODULE} => {GO_KIT}\n")
    env = {name: value for name, value in environment().items() if name != "APPLEID_MOCK_BIN"}
    status, output = run_go_test(tmp_path, block.text, env)
    assert status == 0 and re.search(r"^ok\s+readme\s", output, re.M), f"{block}:\n{output}"
    # The twin: the same test where the binary is not, failing with the kit's own words.
    status, output = run_go_test(tmp_path, block.text, {**env, "APPLEID_MOCK_BIN": "/nonexistent/appleid-mock"})
    assert status == 1 and "the appleid-mock binary /nonexistent/appleid-mock is not an executable file" in output, f"{block}:\n{output}"


def test_readme_go_kit_has_its_ten_line_test():
    assert [block.document for block in of_kind("go-test")] == ["integrations/go/README.md"]


# ---- the Java kit's blocks, compiled against its jar as a user's ----

JAVA_KIT = ROOT / "integrations" / "java"
JUNIT_LAUNCHER = pathlib.Path(os.environ.get("JUNIT5_JARS", "/usr/share/java")) / "junit-platform-console-standalone.jar"


@pytest.fixture(scope="module")
def java_kit_jar(tmp_path_factory):
    for tool in ("javac", "java"):
        if not shutil.which(tool):
            pytest.fail(f"no {tool}: scripts/setup installs default-jdk-headless for the kits")
    if not JUNIT_LAUNCHER.exists():
        pytest.fail(f"no {JUNIT_LAUNCHER}: scripts/setup installs junit5 for the kits")
    build = tmp_path_factory.mktemp("java-kit")
    made = subprocess.run([str(JAVA_KIT / "run-tests"), "--jar"], env={**os.environ, "APPLEID_MOCK_JAVA_BUILD": str(build)},
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    [jar] = build.glob("appleid-mock-*.jar")
    return jar


def run_java_test(directory, jar, text, env):
    name = re.search(r"^class (\w+)", text, re.M).group(1)
    (directory / f"{name}.java").write_text(text)
    classes = directory / "classes"
    classpath = f"{JUNIT_LAUNCHER}{os.pathsep}{jar}"
    compiled = subprocess.run(["javac", "--release", "17", "-cp", classpath, "-d", str(classes), f"{name}.java"], cwd=directory,
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    result = subprocess.run(["java", "-cp", f"{classpath}{os.pathsep}{classes}", "org.junit.platform.console.ConsoleLauncher",
                             "--disable-banner", "--disable-ansi-colors", "--details=summary", f"--select-class={name}"],
                            cwd=directory, env=env, capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("block", of_kind("java-test"), ids=repr)
def test_readme_java_block_passes_against_the_kits_jar(block, java_kit_jar, tmp_path):
    env = {name: value for name, value in environment().items() if name != "APPLEID_MOCK_BIN"}
    status, output = run_java_test(tmp_path, java_kit_jar, block.text, env)
    assert status == 0 and re.search(r"\[\s+1 tests successful\s+\]", output), f"{block}:\n{output}"
    # The twin: the same test where the binary is not, failing with the kit's own words.
    status, output = run_java_test(tmp_path, java_kit_jar, block.text, {**env, "APPLEID_MOCK_BIN": "/nonexistent/appleid-mock"})
    assert status == 1 and "the appleid-mock binary /nonexistent/appleid-mock is not an executable file" in output, f"{block}:\n{output}"


def test_readme_java_kit_has_its_ten_line_test():
    assert [block.document for block in of_kind("java-test")] == ["integrations/java/README.md"]


# ---- the backend-CI recipes (docs/backend-ci.md, integrations/python/README.md) ----

PUBLISHED_ACTION = "appleid-mock/appleid-mock@v"
PUBLISHED_REPORT = "appleid-mock/appleid-mock/report@v"


def actionlint():
    found = shutil.which("actionlint", path=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if not found:
        pytest.fail("no actionlint: scripts/setup installs it from PyPI into the interop venv")
    return found


def lint_workflow(text, directory):
    """actionlint on `text` as a workflow of a repository holding this one's action, the published
    action's `uses:` pointed at it so its inputs are checked against action.yml."""
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    shutil.copy(ROOT / "action.yml", directory / "action.yml")
    shutil.copytree(ROOT / "report", directory / "report")
    shutil.copytree(ROOT / "action", directory / "action")
    local = re.sub(re.escape(PUBLISHED_REPORT) + r"[\w.-]+", "./report", text)
    local = re.sub(re.escape(PUBLISHED_ACTION) + r"[\w.-]+", "./", local)
    (directory / ".github" / "workflows").mkdir(parents=True)
    (directory / ".github" / "workflows" / "recipe.yml").write_text(local)
    return subprocess.run([actionlint(), "-no-color", ".github/workflows/recipe.yml"], cwd=directory, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("block", of_kind("workflow"), ids=repr)
def test_readme_workflow_block_passes_actionlint_with_this_action(block, tmp_path):
    assert PUBLISHED_ACTION in block.text, f"{block} does not use the action"
    result = lint_workflow(block.text, tmp_path)
    assert (result.returncode, result.stdout) == (0, ""), f"{block}:\n{result.stdout}{result.stderr}"


def test_readme_workflow_check_refuses_an_input_the_action_lacks(tmp_path):
    block = of_kind("workflow")[0]
    result = lint_workflow(block.text.replace("version: 0.2.0", "release: 0.2.0", 1), tmp_path)
    assert result.returncode == 1 and 'input "release" is not defined in action "AppleIDMock"' in result.stdout, result.stdout


def check_compose_schema(path):
    checker = shutil.which("check-jsonschema", path=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert checker, "no check-jsonschema in the interop venv (Tests/Interop/requirements.txt)"
    return subprocess.run([checker, "--schemafile", str(ROOT / "Tests" / "Schemas" / "compose-spec.json"), str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("block", of_kind("compose"), ids=repr)
def test_readme_compose_block_is_valid_and_comes_up(block, tmp_path):
    compose = tmp_path / "compose.yml"
    compose.write_text(block.text)
    result = check_compose_schema(compose)
    assert result.returncode == 0, f"{block}: {result.stdout}{result.stderr}"
    # The twin: the same file with its port mapping broken is refused.
    broken = tmp_path / "broken.yml"
    broken.write_text(block.text.replace('- "127.0.0.1:8080:8080"', "- {published: [8080]}"))
    assert broken.read_text() != block.text and check_compose_schema(broken).returncode != 0
    podman_compose = os.environ.get("APPLEID_MOCK_TEST_COMPOSE")
    if not podman_compose:
        pytest.skip(f"{block}: schema-checked; bringing it up needs a container engine and podman-compose "
                    "(scripts/oci-check sets APPLEID_MOCK_TEST_COMPOSE)")
    scenario = subprocess.run([BINARY, "scenario", "print"], capture_output=True, text=True, check=True).stdout
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "apple-scenario.json").write_text(scenario)
    project = f"readme-compose-{os.getpid()}"
    up = subprocess.run([podman_compose, "-p", project, "-f", str(compose), "up", "-d", "--build"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=600)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        container = f"{project}_appleid-mock_1"
        # The image's own health check, inside the container, then the published port here.
        for _ in range(100):
            check = subprocess.run(["podman", "healthcheck", "run", container], capture_output=True, text=True)
            if check.returncode == 0:
                break
            time.sleep(0.1)
        assert check.returncode == 0, check.stdout + check.stderr
        import urllib.request
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open("http://127.0.0.1:8080/__mock/health", timeout=10) as answer:
            assert answer.read() == b'{"active_kid":"W2ek7HdPaL","issuer":"https://appleid.apple.com","status":"ok"}'
        mounts = subprocess.run(["podman", "inspect", "--format", "{{len .Mounts}}", container], capture_output=True, text=True)
        assert mounts.stdout.strip() == "0", "the scenario is built in, not mounted"
    finally:
        subprocess.run([podman_compose, "-p", project, "-f", str(compose), "down", "-v", "-t", "5"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("block", of_kind("ini"), ids=repr)
def test_readme_ini_block_names_only_the_plugins_options(block):
    import configparser
    from appleid_mock.plugin import OPTIONS
    known = {ini for _, ini, _, _ in OPTIONS} | {"appleid_mock_args"}
    parser = configparser.ConfigParser()
    parser.read_string(block.text)
    assert parser.sections() == ["pytest"], block
    unknown = set(parser["pytest"]) - known
    assert not unknown, f"{block} names options the plugin does not have: {unknown}"


def test_readme_ini_check_refuses_an_unknown_option():
    from appleid_mock.plugin import OPTIONS
    assert "appleid_mock_binary" not in {ini for _, ini, _, _ in OPTIONS}


@pytest.mark.parametrize("block", of_kind("pytest needs-engine"), ids=repr)
def test_readme_pytest_block_runs_on_a_container_engine(block, tmp_path):
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        pytest.skip(f"{block}: no container engine: DOCKER_HOST is unset and /var/run/docker.sock does not exist "
                    "(scripts/oci-check runs it against rootful podman's socket, with the image scripts/release tagged)")
    test = tmp_path / "test_readme_engine_block.py"
    test.write_text(block.text)
    env = dict(environment(), TESTCONTAINERS_RYUK_DISABLED="true")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{block}:\n{result.stdout}{result.stderr}"
