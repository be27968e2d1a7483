"""The form_post cookie bug (issue 45 §2), in headless Chromium. Apple's callback POST comes from
https://appleid.apple.com, another site than the app's, so the browser withholds the app's
SameSite=Lax cookies from it; an app that keeps its state in such a cookie fails in production.
Browsers decide "same site" by scheme and registrable domain, not port: a mock reached as
127.0.0.1 is another site than an app on localhost (the cross-site setup, as with Apple), while a
mock reached as localhost is the same site (the bug hides, and the mock says so on stderr and in the
journal, once per client and return URL).

The app: /login?cookie=lax|none sets its state cookie (SameSite=Lax, or SameSite=None; Secure, which
Chromium keeps on http://localhost) and sends the browser to the mock's authorize page; /callback
answers "signed in" when the posted state matches the cookie, "state cookie missing" otherwise."""
import http.server
import os
import secrets
import shutil
import urllib.parse

import pytest
import requests

from conftest import answer_html, browser_world

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


COOKIES = {"lax": "SameSite=Lax", "none": "SameSite=None; Secure"}


class App(http.server.BaseHTTPRequestHandler):
    """The app on http://localhost:PORT; `authorize` is the mock's authorize URL the test chose."""
    authorize = ""
    redirect_uri = ""

    def do_GET(self):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        state = secrets.token_urlsafe(12)
        target = App.authorize + "?" + urllib.parse.urlencode({
            "client_id": "com.example.web", "redirect_uri": App.redirect_uri, "response_type": "code",
            "response_mode": "form_post", "state": state})
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Set-Cookie", f"state={state}; Path=/; HttpOnly; {COOKIES[query['cookie']]}")
        self.end_headers()

    def do_POST(self):
        form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
        cookies = dict(part.strip().split("=", 1) for part in (self.headers.get("Cookie") or "").split(";") if "=" in part)
        outcome = "signed in" if cookies.get("state") == form.get("state") and "code" in form else "state cookie missing"
        answer_html(self, f'<p id="outcome">{outcome}</p>'.encode())

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with browser_world(App, tmp_path_factory.mktemp("cookies"), CHROMEDRIVER, app_host="localhost") as world:
        yield world


def sign_in(world, mock_host, cookie):
    """Logs in through the mock reached as `mock_host`; returns the app's callback outcome."""
    mock, browser, app = world
    port = mock.url.rsplit(":", 1)[1]
    App.authorize = f"http://{mock_host}:{port}/auth/authorize"
    browser.get(f"{app}/login?cookie={cookie}")
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "continue"))[0].click()
    return WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "outcome"))[0].text


def notices(mock):
    entries = requests.get(f"{mock.url}/__mock/requests?limit=100", timeout=10).json()["requests"]
    return [e["reason"] for e in entries if e["path"] == "/auth/authorize" and e["reason"] and "same site" in e["reason"]]


def test_cookie_bug_lax_state_cookie_is_missing_in_the_cross_site_setup(world):
    # The mock as 127.0.0.1, the app on localhost: two sites, as Apple and any app are.
    assert sign_in(world, "127.0.0.1", "lax") == "state cookie missing"
    assert notices(world[0]) == []


def test_cookie_bug_fix_samesite_none_secure_signs_in_in_the_cross_site_setup(world):
    assert sign_in(world, "127.0.0.1", "none") == "signed in"


def test_cookie_bug_hides_in_the_same_site_setup_and_the_mock_says_so_once(world):
    mock = world[0]
    # The mock as localhost: the same site as the app (ports do not count), so the Lax cookie is sent.
    assert sign_in(world, "localhost", "lax") == "signed in"
    assert sign_in(world, "localhost", "lax") == "signed in"
    [notice] = notices(mock)
    assert notice.startswith(f"the redirect_uri {App.redirect_uri} of com.example.web is the same site as this mock"), notice
    assert notice.endswith("(docs/frontend-tests.md, Catch the cookie bug)"), notice
