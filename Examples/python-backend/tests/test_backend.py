"""The example backend against the mock standing in for appleid.apple.com: first and later web
logins, a native login, a key rotation mid-suite, and consent revoked and account deleted
arriving as Apple's signed notifications. Runs in order: each step builds on the last.
`stack` is the session's mock (the appleid-mock plugin's `AppleIDMock`) once the backend runs:
the tests drive Apple's side through it (a native sign-in, a key rotation, a user's action at
Apple, the request journal)."""
import json
import os
from html.parser import HTMLParser

import pytest
import requests
from appleid_mock import AppleIDMockError

BACKEND = "http://127.0.0.1:3000"
APPLE = "https://appleid.apple.com"
# The link the backend gives browsers (its APPLE_AUTHORIZE_URL; Apple's own unless set).
AUTHORIZE = os.environ.get("APPLE_AUTHORIZE_URL", f"{APPLE}/auth/authorize")


def hidden_fields(html):
    class Collector(HTMLParser):
        def __init__(self):
            super().__init__()
            self.fields = {}

        def handle_starttag(self, tag, attrs):
            attributes = dict(attrs)
            if tag == "input" and attributes.get("type") == "hidden":
                self.fields[attributes["name"]] = attributes.get("value", "")

    collector = Collector()
    collector.feed(html)
    return collector.fields


def web_login(user):
    """The user's browser: the backend's link, Apple's consent page, Continue, and the form
    Apple's page posts back to the backend. Returns (what the backend answered, the posted fields)."""
    authorize = requests.get(f"{BACKEND}/?redirect=0").json()["authorize_url"]
    assert authorize.startswith(f"{AUTHORIZE}?"), authorize
    # This test's browser reaches Apple (or the mock) as appleid.apple.com, whatever name a
    # browser elsewhere would use.
    authorize = f"{APPLE}/auth/authorize?" + authorize.split("?", 1)[1]
    browser = requests.Session()
    consent = browser.get(authorize)
    assert consent.status_code == 200, consent.text
    form = hidden_fields(consent.text)
    form.update({"mock_user": user, "mock_action": "continue"})
    page = browser.post(authorize.split("?")[0], data=form)
    if page.status_code != 200:
        return page, None
    posted = hidden_fields(page.text)
    return requests.post(f"{BACKEND}/callback", data=posted), posted


def notification_after(last):
    """Waits (long poll, no sleeping) for the mock's next notification to settle."""
    records = requests.get(f"{APPLE}/__mock/notifications", params={"after": last, "wait": 30}).json()["notifications"]
    assert records and records[0]["outcome"] == "delivered", records
    return records[0]


STATE = {}


def test_home_page_links_to_the_authorize_url_with_state_and_nonce(stack):
    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs = []

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self.hrefs.append(dict(attrs)["href"])

    page = requests.get(f"{BACKEND}/")
    links = Links()
    links.feed(page.text)
    assert len(links.hrefs) == 1 and links.hrefs[0].startswith(f"{AUTHORIZE}?"), page.text
    query = dict(part.split("=", 1) for part in links.hrefs[0].split("?", 1)[1].split("&"))
    assert {"client_id", "redirect_uri", "state", "nonce"} <= query.keys() and query["response_mode"] == "form_post"
    # The twin: another visit gets another state.
    again = Links()
    again.feed(requests.get(f"{BACKEND}/").text)
    assert again.hrefs[0] != links.hrefs[0]


def test_first_web_login_keeps_name_and_email_a_later_one_gets_neither(stack):
    answer, posted = web_login("alice")
    assert answer.status_code == 200, answer.text
    first = answer.json()
    assert first == {"sub": first["sub"], "email": "alice@example.com", "name": "Alice Appleseed", "first_login": True}
    assert json.loads(posted["user"])["name"] == {"firstName": "Alice", "lastName": "Appleseed"}
    STATE["alice"] = first["sub"]
    answer, posted = web_login("alice")
    assert "user" not in posted, "Apple sends name and email once"
    assert answer.json() == dict(first, first_login=False), "the backend kept them"
    assert requests.post(f"{BACKEND}/refresh/{first['sub']}").json() == {"signed_in": True}


def test_the_backend_calls_apple_exactly_as_apple_requires(stack):
    """What the backend sent Apple, read back from the mock's request journal: one code exchange
    per login with the registered redirect_uri and a fresh ES256 client_secret, then a refresh."""
    after = stack.journal_mark()
    answer, posted = web_login("alice")
    assert answer.status_code == 200, answer.text
    assert requests.post(f"{BACKEND}/refresh/{STATE['alice']}").json() == {"signed_in": True}
    calls = stack.requests(after=after, path="/auth/token")
    assert [(call["grant_type"], call["status"]) for call in calls] == [("authorization_code", 200), ("refresh_token", 200)]
    exchange, renewal = calls
    assert exchange["form"]["code"] == posted["code"]
    assert exchange["form"]["redirect_uri"] == "http://localhost:3000/callback"
    assert "client_secret" not in exchange["form"], "the journal shows the secret decoded, never its signature"
    secret = exchange["client_secret"]
    assert {k: secret["header"].get(k) for k in ("alg", "kid")} == {"alg": "ES256", "kid": "MOCKKEY001"}
    assert {k: secret["claims"][k] for k in ("iss", "sub", "aud")} == {"iss": "MOCKTEAM01", "sub": "com.example.web", "aud": APPLE}
    assert 0 < secret["claims"]["exp"] - secret["claims"]["iat"] <= 15777000, "at most six months"
    assert renewal["form"]["refresh_token"] and renewal["client_id"] == "com.example.web"
    exchanges = {"after": after, "path": "/auth/token", "grant_type": "authorization_code"}
    assert len(stack.requests(**exchanges)) == 1, "exactly once"
    # The twin: a replayed callback is refused by the backend without calling Apple again.
    replayed = requests.post(f"{BACKEND}/callback", data=posted)
    assert replayed.status_code == 400 and replayed.json() == {"error": "unknown state"}
    assert len(stack.requests(**exchanges)) == 1


def test_native_login_verifies_the_identity_token_and_redeems_the_code(stack):
    credential = stack.sign_in("bob", "com.example.app")
    answer = requests.post(f"{BACKEND}/native", json={k: credential[k] for k in ("identityToken", "authorizationCode", "fullName")})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"sub": credential["user"], "email": credential["email"], "name": "Bob Bobson", "first_login": True}
    assert credential["email"].endswith("@privaterelay.appleid.com")
    STATE["bob"] = credential["user"]
    # The twin: a tampered identity token is refused.
    forged = credential["identityToken"][:-4] + ("AAAA" if not credential["identityToken"].endswith("AAAA") else "BBBB")
    refused = requests.post(f"{BACKEND}/native", json={"identityToken": forged, "authorizationCode": credential["authorizationCode"]})
    assert refused.status_code == 401


def test_key_rotation_mid_suite_is_followed_by_the_backends_key_cache(stack):
    rotated = stack.rotate_keys()
    assert rotated["state"] == "active"
    answer, _ = web_login("alice")
    assert answer.status_code == 200, answer.text
    assert answer.json()["sub"] == STATE["alice"]
    assert requests.post(f"{BACKEND}/refresh/{STATE['alice']}").json() == {"signed_in": True}


def test_consent_revoked_arrives_as_a_notification_and_the_next_login_is_a_first_again(stack):
    last = (requests.get(f"{APPLE}/__mock/notifications").json()["notifications"] or [{"id": 0}])[-1]["id"]
    stack.fire_event("consent-revoked", "alice", "com.example.web")
    record = notification_after(last)
    assert [attempt["status"] for attempt in record["attempts"]] == [200]
    user = requests.get(f"{BACKEND}/users/{STATE['alice']}").json()
    assert user["status"] == "revoked" and user["events"] == ["consent-revoked"]
    assert requests.post(f"{BACKEND}/refresh/{STATE['alice']}").json() == {"signed_in": False, "reason": "revoked"}
    answer, posted = web_login("alice")
    assert "user" in posted, "a first authorization again: Apple sends the user JSON"
    assert answer.json()["first_login"] is True


def test_account_deleted_arrives_as_a_notification_and_apple_refuses_the_user(stack):
    last = requests.get(f"{APPLE}/__mock/notifications").json()["notifications"][-1]["id"]
    stack.fire_event("account-deleted", "bob", "com.example.app")
    notification_after(last)
    user = requests.get(f"{BACKEND}/users/{STATE['bob']}").json()
    assert user["status"] == "deleted" and user["email"] is None
    assert requests.post(f"{BACKEND}/refresh/{STATE['bob']}").json() == {"signed_in": False, "reason": "deleted"}
    with pytest.raises(AppleIDMockError) as refused:
        stack.sign_in("bob", "com.example.app")
    assert refused.value.status == 400 and refused.value.body["field"] == "user"
    # The twin: alice is untouched.
    assert requests.get(f"{BACKEND}/users/{STATE['alice']}").json()["status"] == "active"
