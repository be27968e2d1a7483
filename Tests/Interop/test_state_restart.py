"""`serve --state FILE`: answers a restart must not take back, the notification log's, a runtime
fault, and reads (`/auth/keys`, `GET /__mock/clock`) answered while a change was on its way to
the file."""
import json
import sqlite3
import threading

import pytest
import requests

from conftest import run_cli
from state_support import APP, LOAD_TIMEOUT, Receiver, StateMock, TimedSession, built_in_scenario


# MARK: - Answers a restart must not take back


def notifying_scenario(tmp_path, receiver):
    scenario = built_in_scenario()
    scenario["teams"][0]["notification_url"] = receiver.url
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return path


def test_a_notification_the_log_showed_delivered_is_not_posted_again_after_sigkill(tmp_path):
    """"A restart, even kill -9, changes nothing a backend can see": once the delivery log has
    answered `delivered`, the backend does not get the notification a second time."""
    receiver = Receiver()
    scenario = notifying_scenario(tmp_path, receiver)
    path = tmp_path / "state.sqlite"
    mock = StateMock(path, scenario)
    try:
        assert requests.post(f"{mock.url}/__mock/sign-in", json={"user": "bob", "client_id": APP}).status_code == 200
        first = requests.post(f"{mock.url}/__mock/events", json={"type": "email-disabled", "user": "bob", "client_id": APP})
        assert first.status_code == 202, first.text
        [record] = requests.get(f"{mock.url}/__mock/notifications", params={"after": 0, "wait": 30}).json()["notifications"]
        assert record["outcome"] == "delivered", record
    finally:
        mock.kill()
    mock = StateMock(path, scenario)
    try:
        # A second notification, delivered after the restart: by then a re-sent first one is in too.
        second = requests.post(f"{mock.url}/__mock/events", json={"type": "email-enabled", "user": "bob", "client_id": APP})
        assert second.status_code == 202, second.text
        settled = requests.get(f"{mock.url}/__mock/notifications", params={"after": second.json()["notification"] - 1, "wait": 30})
        assert [item["outcome"] for item in settled.json()["notifications"]] == ["delivered"], settled.text
        log = requests.get(f"{mock.url}/__mock/notifications").json()["notifications"]
        assert log[0] == record, (record, log[0])
        posted = [events["type"] for status, _, events in receiver.seen()]
        assert posted == ["email-disabled", "email-enabled"], \
            f"the receiver got {posted}: the first notification again after the restart, though the log had answered it delivered"
    finally:
        mock.stop()
        receiver.stop()


def test_a_cleared_notification_log_stays_cleared_after_sigkill(tmp_path):
    receiver = Receiver()
    scenario = notifying_scenario(tmp_path, receiver)
    path = tmp_path / "state.sqlite"
    mock = StateMock(path, scenario)
    try:
        assert requests.post(f"{mock.url}/__mock/sign-in", json={"user": "bob", "client_id": APP}).status_code == 200
        assert requests.post(f"{mock.url}/__mock/events", json={"type": "email-disabled", "user": "bob", "client_id": APP}).status_code == 202
        [record] = requests.get(f"{mock.url}/__mock/notifications", params={"after": 0, "wait": 30}).json()["notifications"]
        assert record["outcome"] == "delivered", record
        cleared = requests.delete(f"{mock.url}/__mock/notifications")
        assert cleared.status_code == 200, cleared.text
        assert requests.get(f"{mock.url}/__mock/notifications").json() == {"notifications": []}
    finally:
        mock.kill()
    mock = StateMock(path, scenario)
    try:
        after = requests.get(f"{mock.url}/__mock/notifications").json()
        assert after == {"notifications": []}, f"DELETE /__mock/notifications answered 200, and after SIGKILL the log holds {after}"
        # The twin: what was not cleared stays.
        fired = requests.post(f"{mock.url}/__mock/events", json={"type": "email-enabled", "user": "bob", "client_id": APP})
        assert fired.status_code == 202, fired.text
        [kept] = requests.get(f"{mock.url}/__mock/notifications", params={"after": 0, "wait": 30}).json()["notifications"]
        assert kept["outcome"] == "delivered", kept
    finally:
        mock.kill()
    mock = StateMock(path, scenario)
    try:
        assert [item["id"] for item in requests.get(f"{mock.url}/__mock/notifications").json()["notifications"]] == [kept["id"]]
    finally:
        mock.stop()
        receiver.stop()


def token_request(mock, code, secret):
    return requests.post(f"{mock.url}/auth/token", data={"grant_type": "authorization_code", "client_id": APP,
                                                         "client_secret": secret, "code": code})


def test_a_runtime_fault_survives_sigkill_listed_and_firing(tmp_path):
    """Faults are state (issue 36): one installed over the control API, answered 201, is listed
    and fires after SIGKILL and a restart on the same file, as often as it had left; a removal
    answered 200 stays removed."""
    path = tmp_path / "state.sqlite"
    secret = run_cli("client-secret", "--client", APP).stdout.strip()
    mock = StateMock(path)
    try:
        installed = requests.post(f"{mock.url}/__mock/faults", json={"path": "/auth/token", "method": "POST", "action": "respond",
                                                                      "status": 503, "body": "down for the crash test", "times": 2})
        assert installed.status_code == 201, installed.text
        fault = installed.json()
        assert (fault["id"], fault["fired"], fault["remaining"]) == ("f1", 0, 2), fault
        credential = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "alice", "client_id": APP}).json()
        first = token_request(mock, credential["authorizationCode"], secret)
        assert (first.status_code, first.text) == (503, "down for the crash test")
        [listed] = requests.get(f"{mock.url}/__mock/faults").json()["faults"]
        assert (listed["fired"], listed["remaining"]) == (1, 1), listed
    finally:
        mock.kill()
    mock = StateMock(path)
    try:
        assert requests.get(f"{mock.url}/__mock/faults").json() == {"faults": [listed]}, \
            "the fault the control API listed before SIGKILL is not listed the same after the restart"
        second = token_request(mock, credential["authorizationCode"], secret)
        assert (second.status_code, second.text) == (503, "down for the crash test"), "the fault did not fire after the restart"
        [spent] = requests.get(f"{mock.url}/__mock/faults").json()["faults"]
        assert (spent["fired"], spent["remaining"]) == (2, 0), spent
        # The twin: spent, it lets the request through to Apple's endpoint, which never saw the code.
        third = token_request(mock, credential["authorizationCode"], secret)
        assert third.status_code == 200, third.text
        removed = requests.delete(f"{mock.url}/__mock/faults")
        assert (removed.status_code, removed.json()) == (200, {"removed": 1}), removed.text
    finally:
        mock.kill()
    mock = StateMock(path)
    try:
        assert requests.get(f"{mock.url}/__mock/faults").json() == {"faults": []}, "a removal answered 200 came back after SIGKILL"
    finally:
        mock.stop()
    # A stopped mock's file holds one sequence of events, the delivery events among them, no table of notifications.
    database = sqlite3.connect(path)
    tables = sorted(name for (name,) in database.execute("SELECT name FROM sqlite_schema WHERE type = 'table'"))
    kinds = [kind for (kind,) in database.execute("SELECT DISTINCT type FROM events WHERE type LIKE 'fault%' ORDER BY type")]
    database.close()
    assert tables == ["events", "meta"], tables
    assert kinds == ["fault-fired", "faults-installed", "faults-removed"], kinds


def kids(session, url):
    return frozenset(key["kid"] for key in session.get(f"{url}/auth/keys").json()["keys"])


def epoch(session, url):
    return session.get(f"{url}/__mock/clock").json()["epoch"]


# (read, the change, whether a read shows it, whether a later read keeps what an earlier showed)
READ_RACES = {
    "auth-keys": (kids, ("/__mock/keys/rotate", {}), lambda before, now: bool(now - before), lambda seen, after: seen <= after),
    "clock": (epoch, ("/__mock/clock", {"advance": 100000}), lambda before, now: now >= before + 100000,
              lambda seen, after: after >= seen),
}


@pytest.mark.parametrize("name", sorted(READ_RACES))
def test_what_an_answered_read_showed_survives_sigkill(tmp_path, name):
    """Rule 5 (and 6) as a client sees it: a kid an answered /auth/keys listed, or a time an
    answered GET /__mock/clock read, is still there after SIGKILL, even when the change behind it
    (a rotation, a clock move) had not been answered yet. Two readers poll while the change is
    asked for; the mock is killed the moment a reader sees it (or once the change is answered).
    Against a mock that shows a change only once it is committed this cannot fail; the race makes
    it a detector, each attempt a fresh chance."""
    read, (path, body), shows, keeps = READ_RACES[name]
    state = tmp_path / "state.sqlite"
    mock = StateMock(state)
    try:
        for attempt in range(20):
            before = read(TimedSession(), mock.url)
            changing = threading.Event()
            changing.set()
            seen = []

            def reader():
                session = TimedSession()
                while changing.is_set():
                    try:
                        now = read(session, mock.url)
                    except requests.RequestException:
                        return
                    if shows(before, now):
                        seen.append(now)
                        mock.process.kill()
                        return

            readers = [threading.Thread(target=reader) for _ in range(2)]
            for thread in readers:
                thread.start()
            try:
                changed = requests.post(f"{mock.url}{path}", json=body, timeout=LOAD_TIMEOUT)
                assert changed.status_code == 200, changed.text
                seen.append(read(TimedSession(), mock.url))
            except requests.RequestException:
                pass       # killed under it: the change may or may not have landed
            changing.clear()
            for thread in readers:
                thread.join()
            mock.kill()
            mock = StateMock(state)
            after = read(TimedSession(), mock.url)
            for value in seen:
                assert keeps(value, after), \
                    f"attempt {attempt}: an answered read showed {sorted(value) if name == 'auth-keys' else value}; " \
                    f"after SIGKILL and a restart it shows {sorted(after) if name == 'auth-keys' else after}"
    finally:
        mock.kill()
