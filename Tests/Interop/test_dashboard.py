"""The dashboard at /__mock/ in a real browser (Debian's headless Chromium through chromedriver):
it shows a sign-in made in another tab, its "Revoke consent" button sends the notification and
the receiver's answer shows; hostile values render as text; a page on another origin cannot drive
the mock; with --control-token the page asks for the token once and then shows the data."""
import http.server
import json
import os
import shutil
import urllib.parse

import pytest
import requests

from conftest import MockProcess, ROOT, answer_html, headless_chromium, serve_http, web_scenario

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SCREENSHOT = ROOT / ".build" / "dashboard.png"
TOKEN = "dashboard-browser-token-0123456789"


class Receiver(http.server.BaseHTTPRequestHandler):
    """The backend's notification endpoint: keeps each POST's JSON and answers 200."""
    received = []

    def do_POST(self):
        Receiver.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Callback(http.server.BaseHTTPRequestHandler):
    """The web app's return URL: the consent page's form_post lands here."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        answer_html(self, b"<html><body><h1 id='done'>signed in</h1></body></html>")

    def log_message(self, *args):
        pass


class Attacker(http.server.BaseHTTPRequestHandler):
    """Another site the developer has open: a form that posts to the mock's control API as
    text/plain (a "simple" request, no preflight)."""
    target = ""

    def do_GET(self):
        body = {"type": "account-delete", "user": "alice", "client_id": "com.example.app"}
        name = json.dumps(body)[:-1] + ', "padding": "'
        page = (f"<html><body><form id='attack' method='post' enctype='text/plain' action='{Attacker.target}/__mock/events'>"
                f"<input type='hidden' name='{name}' value='\"}}'><button id='go'>go</button></form></body></html>").encode()
        answer_html(self, page)

    def log_message(self, *args):
        pass


def open_browser():
    return headless_chromium(CHROMEDRIVER, "--window-size=1400,1600")


@pytest.fixture
def world(tmp_path):
    receiver, callback = serve_http(Receiver), serve_http(Callback)
    Receiver.received.clear()
    redirect_uri = f"http://127.0.0.1:{callback.server_port}/callback"
    mock = MockProcess("--scenario", web_scenario(tmp_path / "scenario.json", redirect_uri,
                                                  f"http://127.0.0.1:{receiver.server_port}/apple/notifications"))
    browser = open_browser()
    yield mock, browser, redirect_uri
    browser.quit()
    mock.stop()
    receiver.shutdown()
    callback.shutdown()


def wait_for(browser, selector, text=None):
    """The element `selector` names once it shows (and holds `text`, when given)."""
    def found(b):
        for element in b.find_elements(By.CSS_SELECTOR, selector):
            if text is None or text in element.text:
                return element
        return False
    return WebDriverWait(browser, 60).until(found, f"{selector} {text or ''}")


def test_dashboard_shows_a_sign_in_from_another_tab_and_revoking_it_notifies_the_backend(world):
    mock, browser, redirect_uri = world
    browser.get(f"{mock.url}/__mock/")
    assert browser.title == "AppleIDMock dashboard"
    wait_for(browser, '[data-test="delete-alice"]')
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-test="revoke-alice-com.example.app"]'), "alice has not signed in yet"
    dashboard = browser.current_window_handle

    # A user signs in through the consent page, in another tab.
    browser.switch_to.new_window("tab")
    query = urllib.parse.urlencode({"client_id": "com.example.web", "redirect_uri": redirect_uri, "response_type": "code id_token",
                                    "response_mode": "form_post", "scope": "name email", "state": "s1", "nonce": "n1"})
    browser.get(f"{mock.url}/auth/authorize?{query}")
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=alice]").click()
    browser.find_element(By.ID, "continue").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "done"))

    # Back on the dashboard, the consent appears by itself (the event feed's long poll).
    browser.switch_to.window(dashboard)
    revoke = wait_for(browser, '[data-test="revoke-alice-com.example.app"]')
    assert "granted" in browser.find_element(By.ID, "user-alice").text
    assert "POST /__mock/sign-in" not in browser.find_element(By.ID, "requests").text
    wait_for(browser, "#requests tbody tr", "/auth/authorize")

    revoke.click()
    wait_for(browser, "#status", "POST /__mock/events → 202")
    # The notification's row: the receiver's 200, delivered.
    row = wait_for(browser, '[data-test="attempt-1-1"]', "delivered")
    assert "consent-revoked" in row.text and "200" in row.text, row.text
    assert "revoked by the user" in browser.find_element(By.ID, "user-alice").text
    assert [json.loads(_claims(posted["payload"])["events"])["type"] for posted in Receiver.received] == ["consent-revoked"]
    # The decoded claims unfold.
    browser.find_element(By.CSS_SELECTOR, "#jwt-1 summary").click()
    claims = browser.find_element(By.CSS_SELECTOR, "#jwt-1 dl.claims").text
    assert "aud\ncom.example.app" in claims and "consent-revoked" in claims, claims
    # At 1000 px wide, no table runs past its card (the users table's Account column did).
    browser.set_window_size(1000, 2400)
    overflowing = browser.execute_script("""
        return [...document.querySelectorAll('section.card')].flatMap(card => [...card.querySelectorAll('table')]
            .filter(table => table.getBoundingClientRect().right > card.getBoundingClientRect().right + 0.5)
            .map(table => card.id));""")
    assert overflowing == [], f"tables wider than their card at 1000 px: {overflowing}"
    # The picture docs/dashboard.md shows (docs/images/dashboard.png is a copy of one run's).
    SCREENSHOT.parent.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOT))
    # The twin: bob never signed in, so nothing was revoked for him.
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-test="revoke-bob-com.example.app"]')


def _claims(jwt):
    import base64
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_a_hostile_user_renders_as_text_and_runs_nothing(world):
    mock, browser, _ = world
    hostile = {"id": "mallory", "email": "\"><img/src=x/onerror=alert(2)>@evil.example", "given_name": "<script>alert(1)</script>",
               "family_name": "<img src=x onerror=alert(3)>"}
    assert requests.post(f"{mock.url}/__mock/users", json=hostile).status_code == 201
    browser.get(f"{mock.url}/__mock/")
    row = wait_for(browser, "#user-mallory")
    assert "<script>alert(1)</script> <img src=x onerror=alert(3)>" in row.text
    assert "\"><img/src=x/onerror=alert(2)>@evil.example" in row.text
    # Nothing was parsed as markup: the page's one script, no image anywhere, no dialog.
    assert browser.execute_script("return document.scripts.length") == 1
    assert browser.find_elements(By.CSS_SELECTOR, "#dashboard img, #dashboard script") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    # The twin: an ordinary user's row reads the same way.
    assert "Alice Appleseed" in browser.find_element(By.ID, "user-alice").text


def test_a_page_on_another_origin_cannot_drive_the_mock(world):
    mock, browser, _ = world
    # From a script or tool: an Origin other than the mock's own is refused.
    refused = requests.post(f"{mock.url}/__mock/reset", json={}, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and refused.json()["field"] == "Origin"
    # From a browser: a form on another origin posts text/plain; the browser names its origin.
    Attacker.target = mock.url
    attacker = serve_http(Attacker)
    try:
        browser.get(f"http://localhost:{attacker.server_port}/")
        browser.find_element(By.ID, "go").click()
        WebDriverWait(browser, 60).until(lambda b: "cross-origin requests to the control API are refused" in b.page_source)
    finally:
        attacker.shutdown()
    alice = next(user for user in requests.get(f"{mock.url}/__mock/users").json()["users"] if user["id"] == "alice")
    assert alice["deleted"] is False
    # The twin: the dashboard's own page, same origin, may.
    browser.get(f"{mock.url}/__mock/")
    wait_for(browser, '[data-test="delete-alice"]')
    assert requests.post(f"{mock.url}/__mock/reset", json={}, headers={"Origin": mock.url}).status_code == 200


def test_with_a_control_token_the_page_asks_for_it_once_then_shows_the_data():
    mock = MockProcess("--control-token", TOKEN)
    browser = open_browser()
    try:
        assert requests.get(f"{mock.url}/__mock/dashboard").status_code == 401
        assert requests.get(f"{mock.url}/__mock/dashboard", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert requests.get(f"{mock.url}/__mock/").status_code == 200
        assert requests.get(f"{mock.url}/auth/keys").status_code == 200

        browser.get(f"{mock.url}/__mock/")
        form = WebDriverWait(browser, 60).until(lambda b: b.find_element(By.ID, "token-form").is_displayed() and b.find_element(By.ID, "token-form"))
        assert not browser.find_elements(By.CSS_SELECTOR, "#user-alice")
        # A wrong token is refused and the form stays.
        browser.find_element(By.ID, "token").send_keys("not-the-token-0123456789")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_for(browser, "#status", "refused this token")
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait_for(browser, "#user-alice")
        assert not browser.find_element(By.ID, "token-form").is_displayed()
        # Kept for the tab: a reload shows the data without asking, and actions carry it.
        browser.refresh()
        wait_for(browser, "#user-alice")
        assert not browser.find_element(By.ID, "token-form").is_displayed()
        wait_for(browser, '[data-test="rotate"]').click()
        wait_for(browser, "#status", "POST /__mock/keys/rotate → 200")
    finally:
        browser.quit()
        mock.stop()
