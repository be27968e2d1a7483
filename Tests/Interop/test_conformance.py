"""`appleid-mock conformance`: the mock compared with Apple, here with recordings of the mock
itself, edited the way Apple has drifted (or might), since the test suite cannot reach Apple.

Each edited recording is a rejected twin of the recording that matches: exit 1, naming the probe,
both answers side by side and the knob where one models the difference.
"""
import json
import os
import pathlib
import re
import stat
import subprocess

import pytest
import yaml

from conftest import BINARY, ROOT, run_cli

PROBES = ["discovery", "keys", "token-no-client", "token-json-body", "token-unknown-grant", "token-unknown-key",
          "revoke-no-client", "revoke-json-body", "migration-no-client", "migration-json-body",
          "authorize-unknown-client", "authorize-bad-redirect"]


def conformance(*args, cwd=ROOT):
    return subprocess.run([BINARY, "conformance", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def recording(mock, tmp_path):
    """A recording of a running mock (the built-in scenario), as --record writes it."""
    directory = tmp_path / "recording"
    result = conformance("--against", mock.url, "--record", str(directory))
    assert result.returncode == 0, result.stdout + result.stderr
    return directory


def edit(directory, probe, change):
    path = directory / f"{probe}.json"
    answer = json.loads(path.read_text())
    change(answer)
    path.write_text(json.dumps(answer, indent=2))


def set_header(answer, name, value):
    answer["headers"] = [field for field in answer["headers"] if field[0].lower() != name.lower()]
    if value is not None:
        answer["headers"].append([name, value])


def probe_block(output, probe):
    """The lines a differing probe prints: its heading, its parts, its knobs."""
    lines = output.splitlines()
    start = next(index for index, line in enumerate(lines) if re.match(rf"^differs {re.escape(probe)}\s", line))
    end = next((index for index in range(start + 1, len(lines)) if not lines[index].startswith("  ")), len(lines))
    return lines[start:end]


def row(block, part):
    """The row of `part` in a probe's block: (marked as differing, mock, apple)."""
    for line in block:
        match = re.match(rf"^  ([* ]) {re.escape(part)}\s{{2,}}(.*?)\s{{2,}}(.*)$", line)
        if match:
            return match.group(1) == "*", match.group(2), match.group(3)
    raise AssertionError(f"no row {part!r} in:\n" + "\n".join(block))


def differing(output):
    return re.findall(r"^differs (\S+)", output, re.M)


# ---- a recording of the mock matches; the exact report ----

def test_conformance_recording_of_the_mock_matches_the_mock_in_process(recording):
    assert sorted(path.name for path in recording.iterdir()) == sorted(f"{probe}.json" for probe in PROBES)
    result = conformance("--against", str(recording))
    assert (result.returncode, result.stderr) == (0, "")
    width = max(map(len, PROBES))
    keys = json.loads((recording / "keys.json").read_text())
    expected_lines = [
        "mock:  started in process (the built-in scenario)",
        f"apple: the recording {recording} (of {keys['recorded_from']})",
        "",
    ]
    requests = {probe: (answer["request"]["method"], answer["request"]["path"])
                for probe, answer in ((p, json.loads((recording / f"{p}.json").read_text())) for p in PROBES)}
    expected_lines += [f"match   {probe.ljust(width)}  {requests[probe][0]} {requests[probe][1]}" for probe in PROBES]
    expected_lines += ["", "12 probes: all match"]
    assert result.stdout == "\n".join(expected_lines) + "\n"


def test_conformance_running_mock_matches_its_own_recording(mock, recording):
    result = conformance("--mock", mock.url, "--against", str(recording), "--suggest")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"mock:  the running mock at {mock.url}\n")
    assert result.stdout.endswith("12 probes: all match\n\nnothing to suggest: the mock matches\n")


def test_conformance_recording_stores_status_headers_and_body(recording, mock):
    answer = json.loads((recording / "token-no-client.json").read_text())
    assert answer == {
        "probe": "token-no-client", "recorded_from": mock.url, "request": {"method": "POST", "path": "/auth/token"},
        "status": 400,
        "headers": [["Server", "Apple"], ["Content-Type", "application/json;charset=UTF-8"], ["Cache-Control", "no-store"],
                    ["Pragma", "no-cache"], ["Content-Length", "26"], ["Connection", "close"]],
        "body": '{"error":"invalid_client"}',
    }


# ---- edited recordings: drift, each naming the probe, both answers, the knob ----

def test_conformance_reports_the_june_2025_discovery_flip(recording):
    def flip(answer):
        answer["status"] = 301
        set_header(answer, "Location", "https://account.apple.com/.well-known/openid-configuration")
        set_header(answer, "Content-Type", "text/html")
        answer["body"] = ""
    edit(recording, "discovery", flip)
    result = conformance("--against", str(recording))
    assert result.returncode == 1, result.stdout + result.stderr
    assert differing(result.stdout) == ["discovery"]
    block = probe_block(result.stdout, "discovery")
    assert block[1] == "  guards apple-behaviour.md §1.6 the discovery document; §12 the June 2025 issuer flip"
    assert row(block, "status") == (True, "200", "301")
    assert row(block, "Location") == (True, "(absent)", "https://account.apple.com/.well-known/openid-configuration")
    assert row(block, "Content-Type") == (True, "application/json;charset=UTF-8", "text/html")
    assert row(block, "body.issuer") == (True, '"https://appleid.apple.com"', "(absent)")
    assert row(block, "body.jwks_uri") == (True, '"{origin}/auth/keys"', "(absent)")
    assert row(block, "Server") == (False, "Apple", "Apple")
    assert block[-1] == "  knob: faults incident discovery-issuer-flip replays it (no scenario knob)"
    assert result.stdout.endswith("12 probes: 11 match, 1 differ (discovery)\n")


def test_conformance_reports_the_flipped_document_served_in_place(recording):
    def flip(answer):
        document = json.loads(answer["body"])
        document["issuer"] = "https://account.apple.com"
        answer["body"] = json.dumps(document, separators=(",", ":"))
    edit(recording, "discovery", flip)
    result = conformance("--against", str(recording))
    assert result.returncode == 1
    block = probe_block(result.stdout, "discovery")
    assert row(block, "body.issuer") == (True, '"https://appleid.apple.com"', '"https://account.apple.com"')
    assert row(block, "body.token_endpoint") == (False, '"{origin}/auth/token"', '"{origin}/auth/token"')
    assert block[-1] == "  knob: faults incident discovery-issuer-flip replays it (no scenario knob)"


def test_conformance_reports_a_max_age_on_the_key_set_with_its_knob_and_suggestion(recording):
    edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", "max-age=86400"))
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1, result.stdout + result.stderr
    assert differing(result.stdout) == ["keys"]
    block = probe_block(result.stdout, "keys")
    assert row(block, "Cache-Control") == (True, "no-cache", "max-age=86400")
    assert row(block, "keys count") == (False, "3", "3")
    assert row(block, "keys[0].kid") == (False, "10 characters, A-Za-z0-9", "10 characters, A-Za-z0-9")
    assert row(block, "keys[0].n") == (False, "2048-bit", "2048-bit")
    assert block[-1] == '  knob: scenario compatibility.jwks_cache_control = "max-age=86400"'
    assert result.stdout.endswith(
        "12 probes: 11 match, 1 differ (keys)\n\n"
        "suggested scenario fragment (merge it into your scenario file):\n"
        '{\n  "compatibility": {\n    "jwks_cache_control": "max-age=86400"\n  }\n}\n')


def test_conformance_suggestion_merged_into_the_scenario_makes_the_mock_match(recording, tmp_path):
    edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", "max-age=86400"))
    scenario = json.loads(run_cli("scenario", "print").stdout)
    scenario["compatibility"]["jwks_cache_control"] = "max-age=86400"
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    result = conformance("--against", str(recording), "--scenario", str(path), "--suggest")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"mock:  started in process (scenario {path})\n" in result.stdout


def test_conformance_reports_a_key_set_without_cache_control_as_the_null_knob(recording):
    edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", None))
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1
    block = probe_block(result.stdout, "keys")
    assert row(block, "Cache-Control") == (True, "no-cache", "(absent)")
    assert block[-1] == "  knob: scenario compatibility.jwks_cache_control = null"


def test_conformance_reports_an_extra_key_with_the_key_count(recording):
    def extra(answer):
        document = json.loads(answer["body"])
        document["keys"].append(dict(document["keys"][0], kid="Zz9Yy8Xx7W"))
        answer["body"] = json.dumps(document, separators=(",", ":"))
    edit(recording, "keys", extra)
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1
    assert differing(result.stdout) == ["keys"]
    block = probe_block(result.stdout, "keys")
    assert row(block, "keys count") == (True, "3", "4")
    assert row(block, "keys[3] members") == (True, "(absent)", "kty, kid, use, alg, n, e")
    assert row(block, "keys[3].kid") == (True, "(absent)", "10 characters, A-Za-z0-9")
    assert block[-1] == "  knob: scenario signing_keys.count = 4"
    assert result.stdout.endswith('{\n  "signing_keys": {\n    "count": 4\n  }\n}\n')


def test_conformance_compares_kids_by_shape_and_not_by_value(recording):
    def other_kids(answer):
        document = json.loads(answer["body"])
        for index, key in enumerate(document["keys"]):
            key["kid"] = f"Other{index}Kid9"
        answer["body"] = json.dumps(document, separators=(",", ":"))
    edit(recording, "keys", other_kids)
    assert conformance("--against", str(recording)).returncode == 0

    def short_kid(answer):
        document = json.loads(answer["body"])
        document["keys"][1]["kid"] = "W6WcOKB"
        answer["body"] = json.dumps(document, separators=(",", ":"))
    edit(recording, "keys", short_kid)
    result = conformance("--against", str(recording))
    assert result.returncode == 1
    assert row(probe_block(result.stdout, "keys"), "keys[1].kid") == (True, "10 characters, A-Za-z0-9", "7 characters, A-Za-z0-9")
    assert "  knob: none models this; the mock itself would have to change (file an issue)" in result.stdout


def test_conformance_reports_a_changed_error_string_without_a_knob(recording):
    edit(recording, "token-no-client",
         lambda answer: answer.update(body='{"error":"invalid_client","error_description":"client_id is missing."}'))
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1
    assert differing(result.stdout) == ["token-no-client"]
    block = probe_block(result.stdout, "token-no-client")
    assert row(block, "body") == (True, '{"error":"invalid_client"}', '{"error":"invalid_client","error_description":"client_id is missing."}')
    assert block[-1] == "  knob: none models this; the mock itself would have to change (file an issue)"
    assert result.stdout.endswith("no scenario knob models these differences\n")


def test_conformance_reports_a_changed_json_body_error_with_its_knob(recording):
    for probe in ("token-json-body", "revoke-json-body", "migration-json-body"):
        edit(recording, probe, lambda answer: answer.update(body='{"error":"invalid_request"}'))
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1
    assert differing(result.stdout) == ["token-json-body", "revoke-json-body", "migration-json-body"]
    for probe in ("token-json-body", "revoke-json-body", "migration-json-body"):
        block = probe_block(result.stdout, probe)
        assert row(block, "body") == (True, '{"error":"invalid_client"}', '{"error":"invalid_request"}')
        assert block[-1] == '  knob: scenario compatibility.token_json_body_error = "invalid_request"'
    assert result.stdout.endswith('{\n  "compatibility": {\n    "token_json_body_error": "invalid_request"\n  }\n}\n')


def test_conformance_reports_authorize_errors_as_json_with_their_knobs(recording):
    def tn3107(answer):
        answer["status"] = 200
        set_header(answer, "Content-Type", "application/json;charset=UTF-8")
        answer["body"] = '{"error":"invalid_client"}'
    edit(recording, "authorize-unknown-client", tn3107)
    result = conformance("--against", str(recording), "--suggest")
    assert result.returncode == 1
    block = probe_block(result.stdout, "authorize-unknown-client")
    assert row(block, "body format") == (True, "HTML page", "JSON")
    assert row(block, "error") == (False, "invalid_client", "invalid_client")
    assert row(block, "error message") == (True, "Invalid client id or web redirect url.", "(absent)")
    assert block[-2:] == ['  knob: scenario compatibility.authorize_error_format = "json"',
                          "  knob: scenario compatibility.authorize_error_status = 200"]


def test_conformance_report_file_holds_every_part_and_both_answers(recording, tmp_path):
    edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", "max-age=60"))
    report = tmp_path / "report.json"
    assert conformance("--against", str(recording), "--report", str(report)).returncode == 1
    document = json.loads(report.read_text())
    assert document["drift"] is True
    assert [probe["id"] for probe in document["probes"]] == PROBES
    keys = document["probes"][1]
    assert keys["result"] == "differs"
    assert {"name": "Cache-Control", "mock": "no-cache", "apple": "max-age=60", "same": False} in keys["parts"]
    assert keys["knobs"] == ['scenario compatibility.jwks_cache_control = "max-age=60"']
    assert ["Cache-Control", "max-age=60"] in keys["apple_answer"]["headers"]
    assert json.loads(keys["mock_answer"]["body"])["keys"][0]["kty"] == "RSA"
    assert document["suggested_fragment"] == {"compatibility": {"jwks_cache_control": "max-age=60"}}
    assert all(probe["result"] == "match" for probe in document["probes"] if probe["id"] != "keys")


# ---- --list: every request, none carrying a secret, token, cookie or user identifier ----

SECRET_FIELDS = re.compile(r"(?:^|[&{\",])\s*\"?(code|token|refresh_token|access_token|id_token|code_verifier|password|"
                           r"sub|user|email|transfer_sub|target)\"?\s*[=:]", re.I)


def listed_requests(text):
    return [block for block in text.split("\n\n")[1:]]


def test_conformance_list_prints_every_request_and_none_carries_a_credential():
    result = conformance("--list")
    assert (result.returncode, result.stderr) == (0, "")
    version = run_cli("--version").stdout.split()[1]
    blocks = listed_requests(result.stdout)
    assert [block.split(":", 1)[0] for block in blocks] == PROBES
    for block in blocks:
        lines = block.splitlines()
        assert re.match(r"^[a-z-]+: (GET|POST) https://appleid\.apple\.com/", lines[0]), lines[0]
        headers = [line.strip() for line in lines[3:] if not line.startswith("  body: ")]
        assert headers[0] == f"User-Agent: appleid-mock-conformance/{version}"
        assert all(re.match(r"^(User-Agent|Content-Type): ", header) for header in headers), block
        body = next((line[len("  body: "):] for line in lines if line.startswith("  body: ")), "")
        assert not SECRET_FIELDS.search(body), block
        # No JWT, no Apple-shaped sub, no address, no bearer, no cookie anywhere in the request.
        assert not re.search(r"eyJ[\w-]+\.", block)
        assert not re.search(r"\d{6}\.[0-9a-f]{32}\.\d{4}", block)
        assert "@" not in block and "Bearer" not in block and not re.search(r"^\s*(Cookie|Authorization):", block, re.M | re.I)
    secret_probe = blocks[PROBES.index("token-unknown-key")]
    assert "client_secret={a JWT made at run time: header {\"alg\":\"ES256\",\"kid\":\"PROBEKEY00\"}" in secret_probe
    assert "signed by a P-256 key generated for the run and discarded}" in secret_probe
    assert [block for block in blocks if "client_secret" in block] == [secret_probe]


def test_conformance_list_check_refuses_a_request_with_a_token():
    # The twin of the check above: the same pattern catches what a leaky probe would send.
    for body in ("client_id=com.example.web&code=c123", "token=r0123&client_id=x", '{"refresh_token":"r1"}',
                 "client_id=x&sub=001624.47f6800a06bb4eb0b1baa142361e00c3.1452"):
        assert SECRET_FIELDS.search(body), body
    for body in ("client_id=com.example.web&grant_type=password", '{"client_id":"com.example.web"}'):
        assert not SECRET_FIELDS.search(body), body


def test_conformance_list_names_the_against_url():
    result = conformance("--list", "--against", "http://127.0.0.1:9/")
    assert result.returncode == 0
    assert "\ndiscovery: GET http://127.0.0.1:9/.well-known/openid-configuration\n" in result.stdout


def test_conformance_sends_exactly_the_listed_requests(mock):
    # What a server receives from a run against it is what --list says: the mock's journal here.
    assert conformance("--against", mock.url).returncode == 0
    entries = [json.loads(line) for line in run_cli("requests", "--server", mock.url).stdout.splitlines()]
    listed = re.findall(rf"^[a-z-]+: (GET|POST) {re.escape(mock.url)}(/[^?\s]*)", conformance("--list", "--against", mock.url).stdout, re.M)
    assert [(entry["method"], entry["path"]) for entry in entries] == listed
    for entry in entries:
        assert set(entry["headers"]) <= {"connection", "content-length", "host", "user-agent", "content-type"}, entry["headers"]
    # The journal decodes the one client_secret sent: the throwaway's, registered nowhere.
    (secret,) = [entry["client_secret"] for entry in entries if entry["client_secret"]]
    header, claims = secret["header"], secret["claims"]
    assert header == {"alg": "ES256", "kid": "PROBEKEY00"}
    assert (claims["iss"], claims["sub"], claims["aud"], claims["exp"] - claims["iat"]) == \
        ("PROBETEAM0", "com.example.web", "https://appleid.apple.com", 300)


# ---- unreachable and bad input: exit 2, never "drift" ----

def test_conformance_unreachable_against_exits_2_without_comparing():
    result = conformance("--against", "http://127.0.0.1:1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == ("appleid-mock: cannot reach --against http://127.0.0.1:1: connect: 127.0.0.1:1: Connection refused\n"
                             "nothing was compared, so this is not drift (exit 2)\n")


def test_conformance_unreachable_mock_exits_2(recording):
    result = conformance("--against", str(recording), "--mock", "http://127.0.0.1:1")
    assert result.returncode == 2
    assert result.stderr.startswith("appleid-mock: cannot reach --mock http://127.0.0.1:1: connect:")


@pytest.mark.parametrize("args, message", [
    (["--against", "/no/such/recording"], "--against /no/such/recording: no such directory (expected an http(s) URL or a recording directory)"),
    (["--against", "https://appleid.apple.com/auth"],
     "--against expects an http(s) URL without a path, query or fragment, or a recording directory, got \"https://appleid.apple.com/auth\""),
    (["--mock", "localhost:8080"], "--mock expects the http(s) URL of a running mock, got \"localhost:8080\""),
    (["--mock", "http://127.0.0.1:8080", "--scenario", "s.json"], "--scenario is for the mock started in process; --mock names a running one"),
    (["--timeout", "0"], "--timeout expects an integer from 1 to 3600, got \"0\""),
    (["extra"], "unexpected argument \"extra\""),
])
def test_conformance_bad_input_exits_2(args, message):
    result = conformance(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == f"appleid-mock: {message}"


def test_conformance_directory_that_is_no_recording_exits_2(tmp_path):
    result = conformance("--against", str(tmp_path), "--record", str(tmp_path / "out"))
    assert (result.returncode, result.stderr.splitlines()[0]) == (2, "appleid-mock: --record needs --against URL: a recording is made from a server")
    result = conformance("--against", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"appleid-mock: --against {tmp_path}: {tmp_path}/discovery.json: ")


def test_conformance_malformed_recording_exits_2(recording):
    edit(recording, "keys", lambda answer: answer.pop("status"))
    result = conformance("--against", str(recording))
    assert result.returncode == 2
    assert result.stderr == f"appleid-mock: --against {recording}: {recording}/keys.json: expected \"status\", 100 to 599\n"


# ---- the docs recipe: actionlint (test_readme.py) and its steps, run against a recording ----

def recipe_workflow():
    text = (ROOT / "docs" / "backend-ci.md").read_text()
    section = text.split("## Watch Apple for drift", 1)[1]
    block = re.search(r"<!-- readme: workflow -->\n```yaml\n(.*?)\n```", section, re.S).group(1)
    return yaml.safe_load(block)


def recipe_gitlab_job():
    text = (ROOT / "docs" / "backend-ci.md").read_text()
    section = text.split("## Watch Apple for drift", 1)[1]
    block = re.search(r"<!-- readme: yaml -->\n```yaml\n(.*?)\n```", section, re.S).group(1)
    return yaml.safe_load(block)


def shims(tmp_path, mock_url):
    """`docker exec CONTAINER …` runs … here, the container's port 8080 being the test's mock;
    `gh` logs its arguments and keeps the body it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "appleid-mock").symlink_to(BINARY)
    docker = bin_dir / "docker"
    docker.write_text('#!/bin/bash\n[ "$1" = exec ] || exit 99\nshift 2\nargs=()\n'
                      f'for a in "$@"; do [ "$a" = http://127.0.0.1:8080 ] && a={mock_url}; args+=("$a"); done\n'
                      'exec "${args[@]}"\n')
    gh = bin_dir / "gh"
    gh.write_text('#!/bin/bash\necho "$*" >> "$GH_LOG"\n'
                  'while [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "$GH_BODY"; shift; done\nexit 0\n')
    for script in (docker, gh):
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


CONDITION = re.compile(r"^steps\.(\w+)\.outputs\.(\w+) (==|!=) '(\w*)'$")


def run_workflow_steps(workflow, tmp_path, mock_url, against):
    """Runs the `run:` steps of the recipe's job as the runner would (bash -eo pipefail, GITHUB_OUTPUT,
    `if:` on step outputs), the action's step standing as the container; returns (failed step, outputs)."""
    (job,) = workflow["jobs"].values()
    bin_dir = shims(tmp_path, mock_url)
    work = tmp_path / "work"
    work.mkdir()
    outputs = {"mock": {"container": "appleid-mock"}}
    expressions = {"${{ steps.mock.outputs.container }}": "appleid-mock", "${{ github.token }}": "test-token"}
    for step in job["steps"]:
        if "uses" in step:
            continue
        condition = step.get("if")
        if condition:
            match = CONDITION.match(condition)
            assert match, f"the recipe's condition {condition!r} is not one this test evaluates"
            value = outputs.get(match.group(1), {}).get(match.group(2), "")
            if (value == match.group(4)) != (match.group(3) == "=="):
                continue
        env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", GH_LOG=str(tmp_path / "gh.log"),
                   GH_BODY=str(tmp_path / "issue-body.md"), GITHUB_OUTPUT=str(tmp_path / f"{step.get('id', 'step')}.out"))
        for name, value in (step.get("env") or {}).items():
            value = str(value)
            for expression, replacement in expressions.items():
                value = value.replace(expression, replacement)
            if name == "STATUS":
                value = outputs["compare"]["status"]
            env[name] = value
        if "AGAINST" in env and step.get("id") == "compare":
            env["AGAINST"] = str(against)
        assert "${{" not in step["run"], f"a run script with an expression in its text: {step['run']!r}"
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=work, env=env,
                                capture_output=True, text=True, timeout=120)
        if "id" in step:
            path = pathlib.Path(env["GITHUB_OUTPUT"])
            outputs[step["id"]] = dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}
        if result.returncode != 0:
            return step.get("name", step.get("id")), outputs, result
    return None, outputs, None


def test_recipe_workflow_is_scheduled_and_runs_conformance_against_apple():
    workflow = recipe_workflow()
    assert workflow[True]["schedule"] == [{"cron": "17 4 * * *"}]  # YAML 1.1 reads `on` as true
    (job,) = workflow["jobs"].values()
    compare = next(step for step in job["steps"] if step.get("id") == "compare")
    assert compare["env"]["AGAINST"] == "https://appleid.apple.com"
    assert "appleid-mock conformance --mock http://127.0.0.1:8080" in compare["run"]


def test_recipe_workflow_steps_pass_against_a_matching_recording(mock, recording, tmp_path):
    failed, outputs, _ = run_workflow_steps(recipe_workflow(), tmp_path, mock.url, recording)
    assert failed is None
    assert outputs["compare"] == {"status": "0"}
    assert not (tmp_path / "gh.log").exists()


def test_recipe_workflow_steps_open_an_issue_and_fail_on_drift(mock, recording, tmp_path):
    edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", "max-age=86400"))
    failed, outputs, result = run_workflow_steps(recipe_workflow(), tmp_path, mock.url, recording)
    assert failed == "Fail unless every probe matched"
    assert outputs["compare"] == {"status": "1"}
    assert "::error::Apple drifted from the mock" in result.stdout
    assert (tmp_path / "gh.log").read_text().splitlines() == [
        "issue list --state open --search in:title Apple drifted from AppleIDMock --json number --jq .[0].number",
        "issue create --title Apple drifted from AppleIDMock --body-file issue.md",
    ]
    body = (tmp_path / "issue-body.md").read_text()
    assert body.startswith("```\nmock:  the running mock at ")
    assert "\ndiffers keys " in body and '  knob: scenario compatibility.jwks_cache_control = "max-age=86400"' in body
    assert '"jwks_cache_control": "max-age=86400"' in body and body.endswith("```\n")


def test_recipe_workflow_steps_fail_without_an_issue_when_apple_is_unreachable(mock, tmp_path):
    failed, outputs, result = run_workflow_steps(recipe_workflow(), tmp_path, mock.url, "http://127.0.0.1:1")
    assert failed == "Fail unless every probe matched"
    assert outputs["compare"] == {"status": "2"}
    assert "::error::Apple could not be reached (or the mock); nothing was compared" in result.stdout
    assert not (tmp_path / "gh.log").exists()


@pytest.mark.parametrize("edited, status", [(False, 0), (True, 1)])
def test_recipe_gitlab_job_script_runs_against_a_recording(recording, tmp_path, edited, status):
    job = recipe_gitlab_job()["apple-drift"]
    assert job["allow_failure"] == {"exit_codes": [2]} and job["variables"]["AGAINST"] == "https://appleid.apple.com"
    if edited:
        edit(recording, "keys", lambda answer: set_header(answer, "Cache-Control", "max-age=86400"))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "apple-scenario.json").write_text(run_cli("scenario", "print").stdout)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "appleid-mock").symlink_to(BINARY)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", AGAINST=str(recording))
    (line,) = job["script"]
    result = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == status, result.stdout + result.stderr
    assert "mock:  started in process (scenario tests/apple-scenario.json)" in result.stdout
