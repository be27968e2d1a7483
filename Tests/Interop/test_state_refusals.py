"""`serve --state FILE`: the files a mock refuses (in use, damaged, newer, another program's), each
with its accepted twin and left as it was, and `appleid-mock state show|export|import`."""
import json
import pathlib
import random
import re
import sqlite3

import requests

from conftest import run_cli
from state_support import APP, SEED, StateMock, answer, refused_start, sha256


# MARK: - The file's refusals, each with its accepted twin


def made_state(tmp_path, name="state.sqlite", scenario=None):
    """A state file a mock made and left with SIGTERM, holding one consent (alice's refresh
    token, returned), checkpointed into one file."""
    path = tmp_path / name
    mock = StateMock(path, scenario)
    try:
        credential = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "alice", "client_id": APP}).json()
        secret = run_cli("client-secret", "--client", APP).stdout.strip()
        tokens = requests.post(f"{mock.url}/auth/token", data={"grant_type": "authorization_code", "client_id": APP,
                                                              "client_secret": secret, "code": credential["authorizationCode"]})
        assert tokens.status_code == 200, tokens.text
    finally:
        mock.stop()
    # A stopped mock leaves its last commits in FILE-wal; fold them in, so FILE alone is the state.
    database = sqlite3.connect(path)
    database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    assert not pathlib.Path(f"{path}-wal").exists()
    return path, tokens.json()["refresh_token"], secret


def refresh_with(mock, refresh_token, secret):
    return requests.post(f"{mock.url}/auth/token", data={"grant_type": "refresh_token", "client_id": APP,
                                                         "client_secret": secret, "refresh_token": refresh_token})


def test_second_mock_on_the_same_state_file_exits_2_naming_it_and_the_first_serves_on(tmp_path):
    path = tmp_path / "state.sqlite"
    first = StateMock(path)
    try:
        status, stderr = refused_start("--state", path)
        assert status == 2, stderr
        assert str(path) in stderr, stderr
        health = requests.get(f"{first.url}/__mock/health")
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
        signed = requests.post(f"{first.url}/__mock/sign-in", json={"user": "alice", "client_id": APP})
        assert signed.status_code == 200, signed.text
    finally:
        first.stop()
    # The twin: once the first has stopped, a mock takes the file, with what the first did.
    second = StateMock(path)
    try:
        again = requests.post(f"{second.url}/__mock/sign-in", json={"user": "alice", "client_id": APP}).json()
        assert (again["email"], again["fullName"]) == (None, None), again
    finally:
        second.stop()


def test_random_bytes_as_state_file_exit_2_naming_it_and_stay_unchanged(tmp_path):
    path = tmp_path / "noise.sqlite"
    path.write_bytes(random.Random(SEED).randbytes(4096))
    before = sha256(path)
    status, stderr = refused_start("--state", path)
    assert (status, str(path) in stderr) == (2, True), stderr
    assert sha256(path) == before


def test_a_state_file_damaged_in_the_middle_exits_2_naming_it_and_stays_unchanged(tmp_path):
    path, refresh_token, secret = made_state(tmp_path)
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    assert len(data) >= 2 * page_size, len(data)
    # The accepted twin first: a byte-for-byte copy serves the refresh token.
    intact = tmp_path / "intact.sqlite"
    intact.write_bytes(bytes(data))
    mock = StateMock(intact)
    try:
        assert refresh_with(mock, refresh_token, secret).status_code == 200
    finally:
        mock.stop()
    # Page 2's b-tree header overwritten: a page type SQLite does not know.
    data[page_size:page_size + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))
    before = sha256(path)
    status, stderr = refused_start("--state", path)
    assert (status, str(path) in stderr) == (2, True), (status, stderr)
    assert sha256(path) == before


def test_a_state_file_of_a_newer_schema_exits_2_saying_newer_and_stays_unchanged(tmp_path):
    path, refresh_token, secret = made_state(tmp_path)
    twin = tmp_path / "twin.sqlite"
    twin.write_bytes(path.read_bytes())
    with sqlite3.connect(path) as database:
        assert database.execute("PRAGMA user_version").fetchone()[0] >= 1
        database.execute("PRAGMA user_version=99")
    database.close()
    before = sha256(path)
    status, stderr = refused_start("--state", path)
    assert (status, str(path) in stderr, "newer" in stderr) == (2, True, True), (status, stderr)
    assert sha256(path) == before
    # The twin: the same file at its own version serves.
    mock = StateMock(twin)
    try:
        assert refresh_with(mock, refresh_token, secret).status_code == 200
    finally:
        mock.stop()


def test_another_programs_sqlite_file_exits_2_naming_it_and_stays_unchanged(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as database:
        database.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)")
        database.execute("INSERT INTO notes(text) VALUES('not appleid-mock')")
    database.close()
    before = sha256(path)
    status, stderr = refused_start("--state", path)
    assert (status, str(path) in stderr) == (2, True), (status, stderr)
    assert sha256(path) == before
    # The twin: a path with no file yet becomes a state file.
    fresh = tmp_path / "fresh.sqlite"
    StateMock(fresh).stop()
    with sqlite3.connect(fresh) as database:
        assert database.execute("PRAGMA application_id").fetchone()[0] == 0x4149444D
    database.close()


def test_state_show_export_and_import_carry_the_refresh_tokens(tmp_path):
    path = tmp_path / "state.sqlite"
    mock = StateMock(path)
    secret = run_cli("client-secret", "--client", APP).stdout.strip()
    tokens = {}
    try:
        for user in ["alice", "bob"]:
            code = requests.post(f"{mock.url}/__mock/sign-in", json={"user": user, "client_id": APP}).json()["authorizationCode"]
            exchanged = requests.post(f"{mock.url}/auth/token", data={"grant_type": "authorization_code", "client_id": APP,
                                                                     "client_secret": secret, "code": code})
            assert exchanged.status_code == 200, exchanged.text
            tokens[user] = exchanged.json()["refresh_token"]
        revoked = requests.post(f"{mock.url}/auth/revoke", data={"client_id": APP, "client_secret": secret, "token": tokens["bob"]})
        assert revoked.status_code == 200
        # While the mock holds the file, the commands refuse it.
        held = run_cli("state", "show", "--state", str(path))
        assert (held.returncode, str(path) in held.stderr) == (2, True), (held.returncode, held.stdout, held.stderr)
    finally:
        mock.stop()

    shown = run_cli("state", "show", "--state", str(path))
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^\s*consents\s+1 live$", shown.stdout, re.MULTILINE), shown.stdout

    exported = tmp_path / "export.json"
    made = run_cli("state", "export", str(exported), "--state", str(path))
    assert made.returncode == 0, made.stderr
    archive = json.loads(exported.read_text())
    assert archive["format"] == "appleid-mock-state" and archive["events"], sorted(archive)

    imported = tmp_path / "imported.sqlite"
    loaded = run_cli("state", "import", str(exported), "--state", str(imported))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == f"made {imported} from {exported}: {len(archive['events'])} events", loaded.stdout
    mock = StateMock(imported)
    try:
        assert refresh_with(mock, tokens["alice"], secret).status_code == 200
        # The twin: bob's revoked token stays refused in the imported state.
        assert answer(refresh_with(mock, tokens["bob"], secret)) == (400, {"error": "invalid_grant"})
    finally:
        mock.stop()

    # Import never writes over a state file.
    before = sha256(path)
    over = run_cli("state", "import", str(exported), "--state", str(path))
    assert (over.returncode, str(path) in over.stderr) == (2, True), (over.returncode, over.stderr)
    assert sha256(path) == before

    # One field broken: exit 2, the JSON path named, no file made.
    broken = json.loads(exported.read_text())
    index = len(broken["events"]) // 2
    broken["events"][index]["sequence"] = "x"
    broken_path = tmp_path / "broken.json"
    broken_path.write_text(json.dumps(broken))
    refused = tmp_path / "refused.sqlite"
    failed = run_cli("state", "import", str(broken_path), "--state", str(refused))
    assert failed.returncode == 2, (failed.stdout, failed.stderr)
    assert f"events[{index}].sequence" in failed.stderr, failed.stderr
    assert not refused.exists()
