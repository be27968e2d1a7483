"""The plugin's calls against the mock's contract: every control route the plugin calls exists in
Sources/AppleIDMock/Contract/openapi.json (whose control half is made from the mock's
declarations), with the method it uses, and every body field and query parameter it sends is one
that route declares. Each public method runs with its `_call` replaced by a recorder (no mock is
started); a sweep of the package's source finds every `_call` site, so a new one cannot go
unchecked."""
import ast
import json
import pathlib
import re

import pytest

from appleid_mock.mock import AppleIDMock

ROOT = pathlib.Path(__file__).resolve().parents[3]
CONTRACT = json.loads((ROOT / "Sources" / "AppleIDMock" / "Contract" / "openapi.json").read_text())
PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "src" / "appleid_mock"


class Recorded(Exception):
    """Raised by the recorder in place of an answer: the method under test stops at its call."""


def record(mock):
    calls = []

    def recorder(method, path, body=None, query=None):
        calls.append((method, path, sorted(body or {}), sorted(query or {})))
        raise Recorded()

    mock._call = recorder
    return calls


# Each public method, called as a user calls it. A method added to the plugin fails
# test_every_public_method_is_exercised until it is listed here.
EXERCISES = {
    "sign_in": lambda m: m.sign_in("alice", "com.example.app", nonce="n", scopes=["name"]),
    "authorize_web": lambda m: m.authorize_web("alice", "com.example.web", "https://app.example.com/callback", state="s",
                                               nonce="n", response_mode="form_post"),
    "token": lambda m: m.token("alice", "com.example.web", defect="expired", nonce="n", claims={"email": None}),
    "advance_clock": lambda m: m.advance_clock(60),
    "rotate_keys": lambda m: m.rotate_keys(),
    "fire_event": lambda m: m.fire_event("consent-revoked", "alice", "com.example.web"),
    "change_password": lambda m: m.change_password("alice"),
    "requests": lambda m: m.requests(path="/auth/token", status="4xx", limit=10),
    "reset": lambda m: m.reset(),
    "health": lambda m: m.health(),
    "wait_until_healthy": lambda m: m.wait_until_healthy(timeout=1),
    "journal_mark": lambda m: m.journal_mark(),
    "refusals": lambda m: m.refusals(after=3),
    "faults.add": lambda m: m.faults.add(path="/auth/token", times=1, action="respond", status=503),
    "faults.incident": lambda m: m.faults.incident("token-endpoint-outage", minutes=5),
    "faults.list": lambda m: m.faults.list(),
    "faults.clear": lambda m: m.faults.clear(incident="token-endpoint-outage"),
}
# Public methods that call no route.
OFFLINE = {"client_secret", "logs"}


def operation(method, path):
    """The contract's operation for `method path` (a path template's `{x}` takes any segment)."""
    for template, item in CONTRACT["paths"].items():
        if re.fullmatch(re.sub(r"\{[^/]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")), path):
            return item.get(method.lower())
    return None


def resolve(node):
    while isinstance(node, dict) and "$ref" in node:
        target = CONTRACT
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def body_fields(schema):
    schema = resolve(schema)
    names = set(schema.get("properties", {}))
    for key in ("oneOf", "anyOf"):
        for shape in schema.get(key, []):
            names |= body_fields(shape)
    return names


def problems(calls):
    """One line per call the contract does not take: an unknown route or method, or a field or
    query parameter the route does not declare."""
    found = []
    for method, path, body, query in calls:
        declared = operation(method, path)
        if declared is None:
            found.append(f"{method} {path} is no operation of the contract")
            continue
        content = declared.get("requestBody", {}).get("content", {}).get("application/json")
        fields = body_fields(content["schema"]) if content else set()
        found += [f"{method} {path} sends {name}, which the contract does not declare" for name in body if name not in fields]
        parameters = {p["name"] for p in map(resolve, declared.get("parameters", [])) if p["in"] == "query"}
        found += [f"{method} {path} asks ?{name}, which the contract does not declare" for name in query if name not in parameters]
    return found


def exercised():
    calls = {}
    for name, exercise in EXERCISES.items():
        mock = AppleIDMock("http://127.0.0.1:9", timeout=1)
        recorded = record(mock)
        with pytest.raises(Recorded):
            exercise(mock)
        calls[name] = recorded
    return calls


def test_every_call_the_plugin_makes_is_an_operation_with_the_fields_it_sends():
    calls = [call for recorded in exercised().values() for call in recorded]
    assert len(calls) == len(EXERCISES)
    assert problems(calls) == []


def test_every_public_method_is_exercised():
    public = {name for name in dir(AppleIDMock) if not name.startswith("_") and callable(getattr(AppleIDMock, name))}
    faults = {"faults." + name for name in dir(AppleIDMock("http://127.0.0.1:9").faults) if not name.startswith("_")}
    assert (public | faults) - {"faults"} - OFFLINE == set(EXERCISES)


def test_every_call_site_in_the_package_is_exercised_or_checked():
    """Every `_call("METHOD", "/path", …)` in the package's source: its route is one a method
    above exercised, or (the notification receiver's two reads) at least an operation."""
    recorded = {(method, path) for calls in exercised().values() for method, path, _, _ in calls}
    sites = set()
    for source in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "_call" and len(node.args) >= 2:
                method, path = node.args[0], node.args[1]
                assert isinstance(method, ast.Constant) and isinstance(path, ast.Constant), f"{source.name}:{node.lineno}: a _call with a computed route"
                sites.add((method.value, path.value))
    assert len(sites) >= 12, sites
    unexercised = sites - recorded
    assert unexercised == {("GET", "/auth/keys"), ("GET", "/__mock/clock")}
    assert problems([(method, path, [], []) for method, path in unexercised]) == []


def test_the_check_names_a_missing_field_a_missing_parameter_and_a_missing_route():
    # The twin: calls the contract does not take are named, each once.
    assert problems([("POST", "/__mock/clock", ["advance", "speed"], []),
                     ("GET", "/__mock/requests", [], ["path", "shoe_size"]),
                     ("POST", "/__mock/keys/DEMOKEY001/activate", [], []),
                     ("PUT", "/__mock/clock", [], []),
                     ("POST", "/__mock/clocks", [], [])]) == [
        "POST /__mock/clock sends speed, which the contract does not declare",
        "GET /__mock/requests asks ?shoe_size, which the contract does not declare",
        "PUT /__mock/clock is no operation of the contract",
        "POST /__mock/clocks is no operation of the contract",
    ]
