"""`serve --state FILE` under SIGKILL: a mock killed at a random moment of a load of code
exchanges, refreshes, revocations, account events and key rotations, and restarted on the same
file, keeps every promise a client saw it make — refresh tokens, spent codes, revocations,
consents, keys, the clock, the event feed and undelivered notifications. The file's
refusals are test_state_refusals.py's, the answers a restart must not take back
test_state_restart.py's.

The crash test's draws (which operation, which user, the kill moment) come from one seed, printed
in every failure message; set APPLEID_MOCK_CRASH_SEED to replay another. A request whose answer
the client did not receive (the process died under it) is "unknown": nothing is asserted about it
until the restarted mock has been asked what became of it, and then only that it is one of the
two possible outcomes."""
import collections
import concurrent.futures
import dataclasses
import json
import random
import re
import threading
import time

import jwt
import requests

from conftest import run_cli
from state_support import APP, CODE_USED, DELIVERY_DEADLINE, ISSUER, KEY_BUDGET, MAX_LIVE_USERS_PER_WORKER, ROUNDS, SEED, USERS_PER_WORKER, USER_WORKERS, Receiver, StateMock, TimedSession, Unanswered, answer, built_in_scenario, fresh_key, send


# MARK: - What the client knows


@dataclasses.dataclass
class Token:
    refresh: str
    generation: int      # the user's consents ended before it was issued: the consent it belongs to
    checked: bool = False


@dataclasses.dataclass
class User:
    """One user as the client knows it. Only one thread drives a user at a time, so the order of
    its operations is the order their answers came."""
    id: str
    hide_email: bool
    given_name: str
    family_name: str
    email: str
    sub: str | None = None
    relay_email: str | None = None
    exists: bool | None = True
    deleted: bool = False
    forwarding: bool = True                      # relay_forwarding: email-disabled, email-enabled, deletion
    consent: str = "none"                        # none | authorized | revoked
    generation: int = 0                          # consents ended so far
    ended_by: dict = dataclasses.field(default_factory=dict)   # generation -> the refresh error its end leaves
    tokens: list = dataclasses.field(default_factory=list)
    redeemed: list = dataclasses.field(default_factory=list)   # [code, checked]: redemption answered 200
    banked: list = dataclasses.field(default_factory=list)     # (code, generation): issued, not redeemed
    maybe_redeemed: list = dataclasses.field(default_factory=list)  # (code, generation): redemption unanswered
    inflight: str | None = None                  # the state-changing operation whose answer was lost:
                                                 # add, sign-in, revoke, consent-revoked, account-delete,
                                                 # email-disabled, email-enabled

    def end_consent(self, error):
        assert self.consent == "authorized", self
        self.ended_by[self.generation] = error
        self.generation += 1
        self.consent = "revoked"

    def expected_refresh(self, token):
        """(status, body) a refresh of `token` must get; None for a 200 with new tokens."""
        if token.generation < self.generation:
            return 400, {"error": self.ended_by[token.generation]}
        assert self.consent == "authorized" and not self.deleted, (self, token)
        return None

    def expected_credential_state(self):
        if self.deleted or self.consent == "revoked":
            return "revoked"
        return {"none": "notFound", "authorized": "authorized"}[self.consent]


@dataclasses.dataclass
class Ack:
    """A notification whose event's POST was answered 202."""
    id: int
    type: str
    user: str
    sub: str
    beacon: bool = False


class Keys:
    """The signing keys as the keys worker (the only one that changes them) knows them: every kid
    with its last seen JWK, the ones it retired itself, the one signing."""

    def __init__(self):
        self.jwks = {}            # kid -> JWK (None until an answered /auth/keys showed it)
        self.retired = set()
        self.active = None
        self.rotations = 0
        self.inflight = None      # ("rotate", None), ("publish", kid), ("activate", kid) or ("retire", kid)

    def published(self):
        return set(self.jwks) - self.retired

    def saw(self, keys):
        """An answered /auth/keys: exactly the keys published, each as before."""
        kids = {key["kid"] for key in keys}
        assert kids == self.published(), f"/auth/keys publishes {sorted(kids)}, the client knows {sorted(self.published())}"
        for key in keys:
            before = self.jwks.get(key["kid"])
            assert before is None or before == key, f"kid {key['kid']} changed: {before} became {key}"
            self.jwks[key["kid"]] = key


# MARK: - The crash run


class CrashRun:
    """One mock on one state file, loaded, killed and restarted ROUNDS times; what the client
    knows accumulates across rounds and every restart is checked against all of it."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.rng = random.Random(SEED)
        self.round = 0
        self.receiver = Receiver()
        scenario = built_in_scenario()
        scenario["teams"][0]["notification_url"] = self.receiver.url
        scenario["signing_keys"]["max_published"] = 100
        self.scenario = tmp_path / "scenario.json"
        self.scenario.write_text(json.dumps(scenario))
        self.state = tmp_path / "state.sqlite"
        self.mock = None
        self.secret = None
        self.lock = threading.Lock()
        self.workers = [[] for _ in range(USER_WORKERS)]     # each worker's users, in creation order
        self.made_users = 0
        self.keys = Keys()
        self.id_tokens = []          # [token, checked]: every id_token an answer carried (a sample of refreshes')
        self.acks = []
        self.feed_mark = 0           # the event feed's sequence up to which the restarted mock was compared
        self.feed_seen = []          # events read from an answered feed since feed_mark, before the kill
        self.clock_before = None     # (real time sent, clock answer, real time answered) just before the kill
        self.errors = []
        self.stats = collections.Counter()
        self.beacon = None
        self.probe = None
        self.parsed_keys = {}
        self.fresh_keys = []         # (kid, PEM) made here, for the keys worker to publish

    # The run: set up, then rounds of load, kill, restart and check.

    def run(self):
        self.mock = StateMock(self.state, self.scenario)
        assert self.state.exists()
        self.setup()
        for self.round in range(1, ROUNDS + 1):
            self.load_and_kill()
            self.restart_and_check(final=self.round == ROUNDS)
        self.mock.stop()
        self.mock = None
        self.check_archive()

    def check_archive(self):
        """The file a crash-ridden run left: `state show` counts the consents the client knows are
        live; exported and imported into a new file, it serves the same tokens and spent codes."""
        users = [user for users in self.workers for user in users if user.exists] + [self.beacon]
        shown = run_cli("state", "show", "--state", str(self.state))
        assert shown.returncode == 0, shown.stderr
        live = sum(user.consent == "authorized" and not user.deleted for user in users)
        assert re.search(rf"^\s*consents\s+{live} live$", shown.stdout, re.MULTILINE), (live, shown.stdout)
        exported = self.tmp_path / "export.json"
        made = run_cli("state", "export", str(exported), "--state", str(self.state))
        assert made.returncode == 0, made.stderr
        imported = self.tmp_path / "imported.sqlite"
        loaded = run_cli("state", "import", str(exported), "--state", str(imported))
        assert loaded.returncode == 0, loaded.stderr
        self.mock = StateMock(imported, self.scenario)
        session = TimedSession()
        rng = random.Random(f"{SEED}/archive")
        for user in users:
            for token in rng.sample(user.tokens, min(3, len(user.tokens))):
                self.refresh(session, user, token)
            for code, _ in rng.sample(user.redeemed, min(2, len(user.redeemed))):
                self.replay(session, user, code)
        self.mock.stop()
        self.mock = None

    def setup(self):
        moved = requests.post(f"{self.mock.url}/__mock/clock", json={"advance": 86400})
        assert moved.status_code == 200, moved.text
        assert moved.json()["frozen"] is False and abs(moved.json()["offset"] - 86400) < 1, moved.json()
        made = run_cli("client-secret", "--client", APP, "--issued-at", str(moved.json()["epoch"]), "--lifetime", "15777000")
        assert made.returncode == 0, made.stderr
        self.secret = made.stdout.strip()
        session = TimedSession()
        self.probe = self.add_user(session, "crash-probe", False, [])
        self.beacon = self.add_user(session, "crash-beacon", True, [])
        self.sign_in(session, self.beacon, bank=False)
        for users in self.workers:
            for _ in range(USERS_PER_WORKER):
                self.add_user(session, self.next_user_id(), self.rng.random() < 0.5, users)
        # The scenario's own users take part too: their subs come from the file's MAC secret.
        listed = {user["id"]: user for user in requests.get(f"{self.mock.url}/__mock/users").json()["users"]}
        for index, id in enumerate(["alice", "bob"]):
            record = listed[id]
            self.workers[index].append(User(id=id, hide_email=record["hide_email"], given_name=record["given_name"],
                                            family_name=record["family_name"], email=record["email"],
                                            sub=record["teams"][0]["sub"], relay_email=record["teams"][0]["relay_email"]))
        keys = requests.get(f"{self.mock.url}/__mock/keys").json()
        self.keys.active = keys["active_kid"]
        self.keys.jwks = {key["kid"]: None for key in keys["keys"] if key["state"] != "retired"}
        self.keys.saw(requests.get(f"{self.mock.url}/auth/keys").json()["keys"])

    def next_user_id(self):
        self.made_users += 1
        return f"crash-{self.made_users}"

    # Operations. Each updates what the client knows from the answer it got; `Unanswered` leaves
    # the operation marked in flight (resolved after the restart).

    def add_user(self, session, id, hide_email, into):
        """POST /__mock/users: the user is in `into` from the moment it is asked for, marked in
        flight until the answer comes."""
        user = User(id=id, hide_email=hide_email, given_name=f"Given{id[-4:]}", family_name="Crash", email=f"{id}@example.com",
                    exists=None, inflight="add")
        into.append(user)
        body = {"id": id, "email": user.email, "given_name": user.given_name, "family_name": user.family_name,
                "hide_email": hide_email}
        made = send(session, "POST", f"{self.mock.url}/__mock/users", json=body)
        assert made.status_code == 201, ("POST /__mock/users", body, answer(made))
        team = made.json()["teams"][0]
        user.sub, user.relay_email, user.exists, user.inflight = team["sub"], team["relay_email"], True, None
        return user

    def token(self, session, **fields):
        return send(session, "POST", f"{self.mock.url}/auth/token", data={"client_id": APP, "client_secret": self.secret, **fields})

    def keep_id_token(self, token):
        with self.lock:
            self.id_tokens.append([token, False])

    def sign_in(self, session, user, bank):
        """A native sign-in: first or later as the client knows the user's consent; then the code
        redeemed (or kept to redeem after the restart)."""
        first = user.consent != "authorized"
        if first:
            user.inflight = "sign-in"
        signed = send(session, "POST", f"{self.mock.url}/__mock/sign-in", json={"user": user.id, "client_id": APP})
        assert signed.status_code == 200, (f"sign-in {user.id}", answer(signed))
        credential = signed.json()
        assert credential["user"] == user.sub, (user, credential)
        if first:
            expected_email = user.relay_email if user.hide_email else user.email
            assert (credential["email"], credential["fullName"]) == (
                expected_email, {"familyName": user.family_name, "givenName": user.given_name}), \
                f"{user.id} (consent {user.consent}) signs in: a first authorization carries email and fullName: {credential}"
        else:
            assert (credential["email"], credential["fullName"]) == (None, None), \
                f"{user.id} consented before: a later authorization carries no email or fullName: {credential}"
        user.consent, user.inflight = "authorized", None
        self.stats["sign-in first" if first else "sign-in later"] += 1
        self.keep_id_token(credential["identityToken"])
        code = credential["authorizationCode"]
        if bank:
            user.banked.append((code, user.generation))
            return
        try:
            exchanged = self.token(session, grant_type="authorization_code", code=code)
        except Unanswered:
            user.maybe_redeemed.append((code, user.generation))
            raise
        self.redeemed(user, code, user.generation, exchanged)

    def redeemed(self, user, code, generation, exchanged):
        assert exchanged.status_code == 200, (f"redeem a fresh code of {user.id}", answer(exchanged))
        tokens = exchanged.json()
        user.tokens.append(Token(tokens["refresh_token"], generation))
        user.redeemed.append([code, False])
        self.keep_id_token(tokens["id_token"])
        self.stats["codes redeemed"] += 1

    def refresh(self, session, user, token):
        refreshed = self.token(session, grant_type="refresh_token", refresh_token=token.refresh)
        expected = user.expected_refresh(token)
        if expected is None:
            assert refreshed.status_code == 200, \
                f"refresh token of {user.id} (consent {token.generation}, live) refused: {answer(refreshed)}"
            assert sorted(refreshed.json()) == ["access_token", "expires_in", "id_token", "token_type"], refreshed.json()
            self.keep_id_token(refreshed.json()["id_token"])
            self.stats["refresh 200"] += 1
        else:
            assert answer(refreshed) == expected, \
                f"refresh token of {user.id} (consent {token.generation}, ended): expected {expected}, got {answer(refreshed)}"
            self.stats["refresh refused"] += 1

    def replay(self, session, user, code):
        replayed = self.token(session, grant_type="authorization_code", code=code)
        assert answer(replayed) == (400, CODE_USED), f"a code of {user.id} redeemed before redeems again: {answer(replayed)}"
        self.stats["replays refused"] += 1

    def revoke(self, session, user, token):
        user.inflight = "revoke"
        revoked = send(session, "POST", f"{self.mock.url}/auth/revoke",
                       data={"client_id": APP, "client_secret": self.secret, "token": token.refresh, "token_type_hint": "refresh_token"})
        assert (revoked.status_code, revoked.text) == (200, ""), ("POST /auth/revoke", answer(revoked))
        user.end_consent("invalid_grant")
        user.inflight = None
        self.stats["revoked"] += 1

    def account_event(self, session, user, type, beacon=False):
        user.inflight = type
        fired = send(session, "POST", f"{self.mock.url}/__mock/events", json={"type": type, "user": user.id, "client_id": APP})
        named = "account-deleted" if type == "account-delete" else type
        assert fired.status_code == 202, (f"POST /__mock/events {type} {user.id}", answer(fired))
        body = fired.json()
        assert body == {"notification": body["notification"], "notifications": [body["notification"]], "type": named,
                        "user": user.id}, body
        if type == "consent-revoked":
            user.end_consent("invalid_request")
        elif type == "account-delete":
            user.end_consent("invalid_request")
            user.deleted, user.forwarding = True, False
        else:
            user.forwarding = type == "email-enabled"
        user.inflight = None
        with self.lock:
            self.acks.append(Ack(body["notification"], named, user.id, user.sub, beacon))
        self.stats[f"event {named}"] += 1

    # The load.

    def user_worker(self, index, stop):
        rng = random.Random(f"{SEED}/{self.round}/{index}")
        users = self.workers[index]
        session = TimedSession()
        try:
            while not stop.is_set():
                live = [user for user in users if user.exists and not user.deleted]
                if len(live) < 2 or (len(live) < MAX_LIVE_USERS_PER_WORKER and rng.random() < 0.03):
                    with self.lock:
                        id = self.next_user_id()
                    self.add_user(session, id, rng.random() < 0.5, users)
                    continue
                user = rng.choice(live)
                live_tokens = [token for token in user.tokens if token.generation == user.generation]
                operation = rng.choices(["sign-in", "bank", "refresh", "replay", "revoke", "consent-revoked", "email",
                                         "account-delete"], weights=[4, 1, 4, 2, 1, 1, 1, 0.2])[0]
                if operation in ("sign-in", "bank"):
                    self.sign_in(session, user, bank=operation == "bank")
                elif operation == "refresh" and user.tokens:
                    self.refresh(session, user, rng.choice(user.tokens))
                elif operation == "replay" and user.redeemed:
                    self.replay(session, user, rng.choice(user.redeemed)[0])
                elif operation == "revoke" and user.consent == "authorized" and live_tokens:
                    self.revoke(session, user, rng.choice(live_tokens))
                elif operation == "consent-revoked" and user.consent == "authorized":
                    self.account_event(session, user, "consent-revoked")
                elif operation == "email" and user.consent == "authorized" and user.hide_email:
                    self.account_event(session, user, rng.choice(["email-disabled", "email-enabled"]))
                elif operation == "account-delete" and user.consent == "authorized":
                    self.account_event(session, user, "account-delete")
        except Unanswered as unanswered:
            if not stop.is_set():
                self.errors.append(AssertionError(f"worker {index}: no answer before the kill: {unanswered}"))
            self.stats["unanswered"] += 1
        except Exception as error:  # an assertion in a thread: reported by the main thread
            self.errors.append(error)
            stop.set()

    def keys_worker(self, stop):
        rng = random.Random(f"{SEED}/{self.round}/keys")
        session = TimedSession()
        keys = self.keys
        # A key change takes a debug build 100-200 ms: each round starts with one, so some are
        # answered before the kill and some are cut by it.
        first = "rotate" if self.round % 2 else "publish"
        try:
            while not stop.is_set():
                operation = first or rng.choices(["rotate", "publish", "activate", "jwks", "mint", "retire"], weights=[1, 2, 2, 3, 3, 1])[0]
                first = None
                if operation == "rotate" and keys.rotations < KEY_BUDGET:
                    # Apple's step: a fresh key (made by the mock) publishes and signs at once.
                    keys.inflight = ("rotate", None)
                    rotated = send(session, "POST", f"{self.mock.url}/__mock/keys/rotate", json={})
                    assert rotated.status_code == 200, ("rotate", answer(rotated))
                    step = rotated.json()
                    assert (step["previous"], step["retired"], step["state"]) == (keys.active, [], "active"), step
                    assert step["kid"] not in keys.jwks, step
                    keys.jwks[step["kid"]] = None
                    keys.active, keys.inflight = step["kid"], None
                    keys.rotations += 1
                    self.stats["rotations"] += 1
                elif operation == "publish" and self.fresh_keys and len(keys.published()) < KEY_BUDGET:
                    kid, pem = self.fresh_keys.pop()
                    keys.inflight = ("publish", kid)
                    published = send(session, "POST", f"{self.mock.url}/__mock/keys", json={"kid": kid, "pem": pem})
                    assert answer(published) == (201, {"kid": kid, "state": "published"}), answer(published)
                    keys.jwks[kid] = None
                    keys.inflight = None
                    self.stats["keys published"] += 1
                elif operation == "activate":
                    candidates = sorted(kid for kid in keys.published() if kid != keys.active and keys.jwks[kid] is not None)
                    if not candidates:
                        continue
                    kid = rng.choice(candidates)
                    keys.inflight = ("activate", kid)
                    activated = send(session, "POST", f"{self.mock.url}/__mock/keys/{kid}/activate", json={})
                    assert answer(activated) == (200, {"kid": kid, "state": "active"}), answer(activated)
                    keys.active, keys.inflight = kid, None
                    self.stats["keys activated"] += 1
                elif operation == "jwks":
                    published = send(session, "GET", f"{self.mock.url}/auth/keys")
                    assert published.status_code == 200, answer(published)
                    keys.saw(published.json()["keys"])
                elif operation == "mint":
                    minted = send(session, "POST", f"{self.mock.url}/__mock/id-token", json={"user": self.probe.id, "client_id": APP})
                    assert minted.status_code == 200, answer(minted)
                    token = minted.json()["id_token"]
                    assert jwt.get_unverified_header(token) == {"kid": keys.active, "alg": "RS256"}, jwt.get_unverified_header(token)
                    self.keep_id_token(token)
                elif operation == "retire":
                    candidates = sorted(kid for kid in keys.published() if kid != keys.active and keys.jwks[kid] is not None)
                    if len(keys.published()) <= 3 or not candidates:
                        continue
                    kid = rng.choice(candidates)
                    keys.inflight = ("retire", kid)
                    retired = send(session, "DELETE", f"{self.mock.url}/__mock/keys/{kid}")
                    assert answer(retired) == (200, {"kid": kid, "state": "retired"}), answer(retired)
                    keys.retired.add(kid)
                    keys.inflight = None
                    self.stats["keys retired"] += 1
        except Unanswered as unanswered:
            if not stop.is_set():
                self.errors.append(AssertionError(f"keys worker: no answer before the kill: {unanswered}"))
            self.stats["unanswered"] += 1
        except Exception as error:
            self.errors.append(error)
            stop.set()

    def load_and_kill(self):
        """The receiver refuses (500) while a notification is known to be on its way, the load
        runs for a random 0-300 ms, and the mock is killed with SIGKILL."""
        while len(self.fresh_keys) < 2:
            self.fresh_keys.append(fresh_key(self.rng))
        self.receiver.status = 500
        session = TimedSession()
        before = len([item for item in self.receiver.seen() if item[0] == 500 and item[2] and item[2]["sub"] == self.beacon.sub])
        self.account_event(session, self.beacon, "email-disabled" if self.round % 2 else "email-enabled", beacon=True)
        deadline = time.monotonic() + 30
        while len([item for item in self.receiver.seen() if item[0] == 500 and item[2] and item[2]["sub"] == self.beacon.sub]) <= before:
            assert time.monotonic() < deadline, "the beacon notification was never attempted (receiver answering 500)"
            time.sleep(0.01)

        stop = threading.Event()
        threads = [threading.Thread(target=self.user_worker, args=(index, stop)) for index in range(USER_WORKERS)]
        threads.append(threading.Thread(target=self.keys_worker, args=(stop,)))
        for thread in threads:
            thread.start()
        time.sleep(self.rng.uniform(0, 0.3))
        # What the client knows just before the kill: the clock, and the event feed since the last check.
        sent = time.time()
        reading = session.get(f"{self.mock.url}/__mock/clock")
        self.clock_before = (sent, reading.json(), time.time())
        self.feed_seen = self.read_feed(session, self.feed_mark)
        stop.set()
        self.mock.kill()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a load worker hung after the kill"
        self.receiver.status = 200
        if self.errors:
            raise self.errors[0]

    def read_feed(self, session, after):
        events = []
        while True:
            page = session.get(f"{self.mock.url}/__mock/events", params={"after": after, "limit": 1000})
            assert page.status_code == 200, page.text
            batch = page.json()["events"]
            assert page.json()["missed"] == 0, page.json()["missed"]
            events += batch
            if len(batch) < 1000:
                return events
            after = batch[-1]["sequence"]

    # The checks after each restart.

    def restart_and_check(self, final):
        began = time.monotonic()
        self.mock = StateMock(self.state, self.scenario)
        self.stats["restart ms"] += int((time.monotonic() - began) * 1000)
        session = TimedSession()
        url = self.mock.url
        check_rng = random.Random(f"{SEED}/{self.round}/check")

        # 6. The clock: the reading before the kill plus the real time since.
        sent = time.time()
        clock = session.get(f"{url}/__mock/clock").json()
        answered = time.time()
        before_sent, before, before_answered = self.clock_before
        assert clock["frozen"] is False, clock
        low, high = before["epoch"] + (sent - before_answered) - 2, before["epoch"] + (answered - before_sent) + 2
        assert low <= clock["epoch"] <= high, \
            f"clock {clock} after the restart; before the kill {before}, {sent - before_answered:.2f}-{answered - before_sent:.2f} s ago"
        assert abs(clock["offset"] - before["offset"]) <= 1, (before, clock)

        # The event feed: every event an answered read showed is there, the same, in order.
        after = self.read_feed(session, self.feed_mark)
        assert after[:len(self.feed_seen)] == self.feed_seen, self.feed_difference(after)
        sequences = [event["sequence"] for event in after]
        assert sequences == sorted(set(sequences)), "event sequences not increasing after the restart"
        if after:
            self.feed_mark = after[-1]["sequence"]

        self.check_users(session)
        self.check_keys(session)
        self.check_id_tokens(check_rng, final)

        users = [user for users in self.workers for user in users if user.exists] + [self.beacon]
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            for future in [pool.submit(self.check_user, user, random.Random(f"{SEED}/{self.round}/{user.id}"), final)
                           for user in users]:
                future.result()

        waited = time.monotonic()
        self.check_notifications(session)
        self.stats["notification wait ms"] += int((time.monotonic() - waited) * 1000)
        self.stats["restart and check ms"] += int((time.monotonic() - began) * 1000)
        print(f"round {self.round}: {dict(sorted(self.stats.items()))}, {len(self.acks)} notifications, "
              f"{len(self.keys.published())} keys")

    def feed_difference(self, after):
        for index, (seen, now) in enumerate(zip(self.feed_seen, after)):
            if seen != now:
                return f"event #{index} after {self.feed_mark}: before the kill {seen}, after the restart {now}"
        return f"{len(self.feed_seen)} events read before the kill, {len(after)} after the restart; " \
               f"the last read before: {self.feed_seen[-1] if self.feed_seen else None}"

    def check_users(self, session):
        """Users added (and deletions answered) are there with the same sub and relay address; an
        addition or deletion in flight is resolved by the list."""
        listed = session.get(f"{self.mock.url}/__mock/users")
        assert listed.status_code == 200, listed.text
        records = {record["id"]: record for record in listed.json()["users"]}
        for user in [user for users in self.workers for user in users] + [self.beacon, self.probe]:
            record = records.get(user.id)
            if user.inflight == "add":
                user.inflight = None
                user.exists = record is not None
                if record is None:
                    continue
                user.hide_email, user.given_name, user.family_name, user.email = (
                    record["hide_email"], record["given_name"], record["family_name"], record["email"])
                user.sub, user.relay_email = record["teams"][0]["sub"], record["teams"][0]["relay_email"]
            if not user.exists:
                continue
            assert record is not None, f"user {user.id} (added, answered 201) is gone after the restart"
            assert (record["teams"][0]["sub"], record["teams"][0]["relay_email"]) == (user.sub, user.relay_email), (user, record)
            forwarding = record["teams"][0]["relay_forwarding"]
            if user.inflight == "account-delete":
                user.inflight = None
                if record["deleted"]:
                    user.end_consent("invalid_request")
                    user.deleted, user.forwarding = True, False
            elif user.inflight in ("email-disabled", "email-enabled"):
                assert forwarding in (user.forwarding, user.inflight == "email-enabled"), (user, record)
                user.forwarding, user.inflight = forwarding, None
            assert (record["deleted"], forwarding) == (user.deleted, user.forwarding), \
                f"{user.id}: deleted {record['deleted']}, relay_forwarding {forwarding}; " \
                f"the client knows {user.deleted}, {user.forwarding}"

    def check_keys(self, session):
        """5. The same keys as before the kill (a rotation or retirement in flight resolved by what
        the mock says now), each JWK byte for byte, the same one signing."""
        keys = self.keys
        health = session.get(f"{self.mock.url}/__mock/health").json()
        listed = session.get(f"{self.mock.url}/__mock/keys").json()
        states = {key["kid"]: key["state"] for key in listed["keys"]}
        if keys.inflight and keys.inflight[0] == "rotate":
            if health["active_kid"] != keys.active:
                assert health["active_kid"] not in keys.jwks, \
                    f"active kid {health['active_kid']} after the restart; the client knew {keys.active} signing"
                keys.jwks[health["active_kid"]] = None
                keys.active = health["active_kid"]
                keys.rotations += 1
        elif keys.inflight and keys.inflight[0] == "retire":
            if states.get(keys.inflight[1]) == "retired":
                keys.retired.add(keys.inflight[1])
        elif keys.inflight and keys.inflight[0] == "publish":
            if keys.inflight[1] in states:
                keys.jwks[keys.inflight[1]] = None
        elif keys.inflight and keys.inflight[0] == "activate":
            if health["active_kid"] == keys.inflight[1]:
                keys.active = keys.inflight[1]
        keys.inflight = None
        assert health["active_kid"] == listed["active_kid"] == keys.active, (health, listed["active_kid"], keys.active)
        for kid in keys.retired:
            assert states.get(kid) == "retired", (kid, states.get(kid))
        published = session.get(f"{self.mock.url}/auth/keys")
        assert published.status_code == 200, published.text
        keys.saw(published.json()["keys"])
        # The signing key itself survived: what it signs now verifies with its JWK from before the kill.
        minted = session.post(f"{self.mock.url}/__mock/id-token", json={"user": self.probe.id, "client_id": APP})
        assert minted.status_code == 200, minted.text
        self.verify(minted.json()["id_token"], keys.active)

    def verify(self, token, kid=None):
        """RS256 under the kid's JWK as the client knows it, Apple's issuer, our audience. Times
        are the mock clock's, a day ahead of this process's, so they are not checked here."""
        header = jwt.get_unverified_header(token)
        assert kid is None or header["kid"] == kid, (header, kid)
        if header["kid"] not in self.parsed_keys:
            self.parsed_keys[header["kid"]] = jwt.PyJWK(self.keys.jwks[header["kid"]])
        key = self.parsed_keys[header["kid"]]
        claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=APP, issuer=ISSUER,
                            options={"verify_exp": False, "verify_iat": False, "verify_nbf": False})
        return claims

    def check_id_tokens(self, rng, final):
        """Every id_token an answer carried verifies with a key /auth/keys publishes now, unless the
        client retired its key itself (the twin: then its kid is no longer published)."""
        for item in self.id_tokens:
            token, checked = item
            if checked and not final and rng.random() > 0.1:
                continue
            kid = jwt.get_unverified_header(token)["kid"]
            if kid in self.keys.retired:
                assert kid not in self.keys.published()
                continue
            assert kid in self.keys.published(), f"a token signed by {kid} before the kill: the key is gone from /auth/keys"
            self.verify(token)
            item[1] = True

    def check_user(self, user, rng, final):
        """1-4 for one user: credential state, refresh tokens, spent codes, codes kept, and whether
        the next sign-in is a first one."""
        session = TimedSession()
        if user.inflight in ("email-disabled", "email-enabled"):
            user.inflight = None     # resolved by check_users; no notification is expected of it
        state = session.get(f"{self.mock.url}/__mock/credential-state", params={"user": user.id, "client_id": APP}).json()["state"]
        if user.inflight in ("sign-in", "revoke", "consent-revoked"):
            # In flight at the kill: either outcome, and the credential state says which.
            landed = {"sign-in": "authorized", "revoke": "revoked", "consent-revoked": "revoked"}[user.inflight]
            assert state in (user.expected_credential_state(), landed), (user.id, user.inflight, state)
            if state != user.expected_credential_state():
                if user.inflight == "sign-in":
                    user.consent = "authorized"
                else:
                    user.end_consent("invalid_grant" if user.inflight == "revoke" else "invalid_request")
            user.inflight = None
        assert user.inflight is None, user
        assert state == user.expected_credential_state(), \
            f"credential state of {user.id}: {state}, the client knows {user.consent}{' (deleted)' if user.deleted else ''}"

        # 1 and 3: live tokens refresh, tokens of an ended consent stay refused.
        for token in user.tokens:
            if token.checked and not final and rng.random() > 0.15:
                continue
            self.refresh(session, user, token)
            token.checked = True
        # 2: no code the client saw redeemed redeems again.
        for item in user.redeemed:
            if item[1] and not final and rng.random() > 0.15:
                continue
            self.replay(session, user, item[0])
            item[1] = True
        # A redemption in flight: redeemed or not; trying again tells which, and either is right.
        for code, generation in user.maybe_redeemed:
            again = self.token(session, grant_type="authorization_code", code=code)
            if again.status_code == 200:
                self.redeemed(user, code, generation, again)
                self.stats["in-flight codes not redeemed"] += 1
            else:
                assert answer(again) == (400, CODE_USED), answer(again)
                user.redeemed.append([code, True])
                self.stats["in-flight codes redeemed"] += 1
        user.maybe_redeemed.clear()
        # The twin of 2: a code issued and not redeemed before the kill redeems now, once.
        for code, generation in user.banked:
            if generation == user.generation and user.consent == "authorized" and not user.deleted:
                self.redeemed(user, code, generation, self.token(session, grant_type="authorization_code", code=code))
                self.replay(session, user, code)
        user.banked.clear()

        # 4: a user who consented is not asked for a first login again; one whose consent ended is.
        if user.deleted:
            refused = session.post(f"{self.mock.url}/__mock/sign-in", json={"user": user.id, "client_id": APP})
            assert answer(refused) == (400, {"error": f"the Apple Account of \"{user.id}\" was deleted", "field": "user"}), \
                answer(refused)
        elif user is not self.beacon:
            self.sign_in(session, user, bank=False)

    def check_notifications(self, session):
        """7. Every event whose POST was answered has its notification delivered: the log says so,
        and the receiver answered 200 to that JWT. A beacon was refused (500) before the kill."""
        deadline = time.monotonic() + DELIVERY_DEADLINE
        while True:
            log = {record["id"]: record for record in session.get(f"{self.mock.url}/__mock/notifications").json()["notifications"]}
            waiting = [ack for ack in self.acks if log.get(ack.id, {}).get("outcome") != "delivered"]
            settled = [(ack, log[ack.id]["outcome"]) for ack in waiting if ack.id in log and log[ack.id]["outcome"] != "pending"]
            assert not settled, f"notifications settled undelivered: {settled[:5]}"
            if not waiting:
                break
            assert time.monotonic() < deadline, \
                f"{len(waiting)} notifications not delivered {DELIVERY_DEADLINE} s after the restart: " \
                f"{[(ack, log.get(ack.id)) for ack in waiting[:3]]}"
            time.sleep(0.1)
        received = {token for status, token, _ in self.receiver.seen() if status == 200}
        refused = [events for status, _, events in self.receiver.seen() if status == 500]
        for ack in self.acks:
            record = log[ack.id]
            assert (record["type"], record["user"], record["event"]["type"], record["event"]["sub"]) == (
                ack.type, ack.user, ack.type, ack.sub), (ack, record)
            assert record["jwt"] in received, f"notification {ack.id} logged delivered, but the receiver never answered 200 to its JWT"
            if ack.beacon:
                assert record["event"] in refused, f"beacon {ack.id} was refused before the kill: {record['event']}"
        for ack in self.acks[-5:]:
            token = log[ack.id]["jwt"]
            if jwt.get_unverified_header(token)["kid"] not in self.keys.retired:
                self.verify(token)


def test_state_survives_sigkill_at_random_moments_of_a_load(tmp_path):
    run = CrashRun(tmp_path)
    started = time.monotonic()
    try:
        run.run()
    except Exception as error:
        stderr = run.mock.stderr_text()[-4000:] if run.mock else ""
        raise AssertionError(f"[seed {SEED} (APPLEID_MOCK_CRASH_SEED), round {run.round} of {ROUNDS}] {type(error).__name__}: "
                             f"{error}\n--- the mock's stderr (tail) ---\n{stderr}") from error
    finally:
        if run.mock is not None and run.mock.process.poll() is None:
            run.mock.kill()
        run.receiver.stop()
    print(f"{ROUNDS} kills in {time.monotonic() - started:.1f} s: {dict(sorted(run.stats.items()))}")
    assert run.stats["sign-in later"] > 0 and run.stats["sign-in first"] > 0 and run.stats["refresh refused"] > 0


def test_a_frozen_clock_reads_the_same_after_sigkill(tmp_path):
    """The twin of the running clock in the crash test: frozen, no real time is added."""
    path = tmp_path / "state.sqlite"
    mock = StateMock(path)
    try:
        frozen = requests.post(f"{mock.url}/__mock/clock", json={"freeze": True, "set": "2030-01-01T00:00:00Z"})
        assert frozen.status_code == 200, frozen.text
        assert (frozen.json()["epoch"], frozen.json()["frozen"]) == (1893456000, True), frozen.json()
    finally:
        mock.kill()
    mock = StateMock(path)
    try:
        clock = requests.get(f"{mock.url}/__mock/clock").json()
        assert (clock["epoch"], clock["frozen"], clock["now"]) == (1893456000, True, "2030-01-01T00:00:00Z"), clock
        token = requests.post(f"{mock.url}/__mock/id-token", json={"user": "alice", "client_id": APP}).json()["id_token"]
        assert jwt.decode(token, options={"verify_signature": False})["iat"] == 1893456000
    finally:
        mock.stop()
