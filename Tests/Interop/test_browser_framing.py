"""The authorize pages against framing and forged forms, in Debian's headless Chromium through
chromedriver: every page of /auth/authorize (the consent page, Apple's error page, the form_post
relay page, the web_message page) carries X-Frame-Options: DENY and frame-ancestors 'none', so an
app's iframe shows Chromium's error page where the same page opened top-level renders; and the
consent POST takes only the mock_page value of a page this mock rendered, once, so a form another
site submits lands on Apple's error page where the consent page's own Continue signs in."""
import html
import http.server
import os
import shutil
import threading
import urllib.parse

import pytest
import requests

from conftest import answer_html, browser_world, hidden_fields

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

# Each page of /auth/authorize and what shows it rendered: the consent form, Apple's error code,
# the relay form that posts to the callback, the web_message page's status line (or, without an
# opener, its lost-opener notice).
PAGES = {"consent": "#consent", "error": "#error-code", "form_post": "#response", "web_message": "#status, #lost-opener"}

# The app's page that frames the mock: its iframe is sent to the mock by its src (a GET) or, for a
# POST, shows one of the app's own pages first and is then sent by a form targeting it; each load of
# it is counted, as is the load of a control iframe of the app's own page beside it.
FRAMING_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>App</title>
<script>
window.loads = {{frame: 0, control: 0}};
function loaded(name) {{
  window.loads[name] += 1;
  if (name === "frame" && window.loads.frame === 1 && {post}) document.getElementById("to-mock").submit();
}}
</script></head><body>
<form id="to-mock" method="post" action="{action}" target="frame">{fields}</form>
<iframe id="frame" name="frame" src="{src}" width="600" height="400" onload="loaded('frame')"></iframe>
<iframe id="control" src="/blank" width="200" height="100" onload="loaded('control')"></iframe>
</body></html>
"""

# A page of another site that posts the mock's consent form itself, at once, in this window.
POSTING_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Elsewhere</title></head><body>
<form id="to-mock" method="post" action="{action}">{fields}</form>
<script>document.getElementById("to-mock").submit()</script>
</body></html>
"""


class App(http.server.BaseHTTPRequestHandler):
    """The app, on another origin than the mock: /blank, /frame (FRAMING_PAGE for `App.target`),
    /post (POSTING_PAGE with `App.fields`) and its /callback; every request is recorded."""
    mock = ""
    redirect_uri = ""
    target = {}  # {"url": …} for a GET in the frame, {"fields": …} for a POST into it
    fields = {}
    seen = []
    lock = threading.Lock()

    def record(self, body=None):
        with App.lock:
            App.seen.append((self.command, urllib.parse.urlsplit(self.path).path, body))

    def do_GET(self):
        self.record()
        path = urllib.parse.urlsplit(self.path).path
        action = html.escape(f"{App.mock}/auth/authorize")
        if path == "/frame":
            post = "fields" in App.target
            page = FRAMING_PAGE.format(action=action, fields=inputs(App.target.get("fields", {})), post="true" if post else "false",
                                       src="/blank" if post else html.escape(App.target["url"]))
        elif path == "/post":
            page = POSTING_PAGE.format(action=action, fields=inputs(App.fields))
        else:
            page = "<!DOCTYPE html><html><body><p id='blank'>app</p></body></html>"
        answer_html(self, page.encode())

    def do_POST(self):
        body = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
        self.record(body)
        answer_html(self, b"<!DOCTYPE html><html><body><h1 id='done'>signed in</h1></body></html>")

    def log_message(self, *args):
        pass


def inputs(fields):
    return "".join(f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">' for name, value in fields.items())


def callbacks():
    with App.lock:
        return [(method, body) for method, path, body in App.seen if path == "/callback"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with browser_world(App, tmp_path_factory.mktemp("framing"), CHROMEDRIVER) as world:
        yield world


@pytest.fixture
def fresh(world):
    """The world with the app's record emptied and the browser out of any frame."""
    _, browser, _ = world
    with App.lock:
        App.seen.clear()
    browser.switch_to.default_content()
    return world


def authorize_url(mock, response_mode="form_post", **overrides):
    query = {"client_id": "com.example.web", "redirect_uri": App.redirect_uri, "response_type": "code",
             "response_mode": response_mode, "state": "s1", **overrides}
    return f"{mock.url}/auth/authorize?{urllib.parse.urlencode(query)}"


def consent_fields(mock, response_mode="form_post"):
    """The hidden fields of a consent page fetched just now (a fresh mock_page among them)."""
    page = requests.get(authorize_url(mock, response_mode), timeout=10)
    assert page.status_code == 200 and 'id="consent"' in page.text, page.text
    return hidden_fields(page.text)


def request_of(mock, kind):
    """How to reach each authorize page: a URL to GET, or the fields to POST."""
    if kind == "consent":
        return {"url": authorize_url(mock)}
    if kind == "error":  # a return URL the client has not registered: Apple's error page
        return {"url": authorize_url(mock, redirect_uri="https://elsewhere.example/callback")}
    mode = "form_post" if kind == "form_post" else "web_message"
    return {"fields": {**consent_fields(mock, mode), "mock_user": "alice", "mock_action": "continue"}}


def wait(browser, condition, seconds=20):
    return WebDriverWait(browser, seconds).until(condition)


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_authorize_pages_send_both_frame_refusals(world, kind):
    mock, _, _ = world
    target = request_of(mock, kind)
    if "url" in target:
        response = requests.get(target["url"], timeout=10)
    else:
        response = requests.post(f"{mock.url}/auth/authorize", data=target["fields"], timeout=10)
    assert response.status_code == (400 if kind == "error" else 200), response.text
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Content-Security-Policy"] == "frame-ancestors 'none'"


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_authorize_pages_framed_by_an_app_are_refused(fresh, kind):
    mock, browser, base = fresh
    App.target = request_of(mock, kind)
    browser.get(f"{base}/frame")
    # The mock's load (for a POST, after the app's own page first), and the control frame's.
    frame_loads = 2 if "fields" in App.target else 1
    wait(browser, lambda b: b.execute_script("return window.loads") == {"frame": frame_loads, "control": 1})
    browser.switch_to.frame(browser.find_element(By.ID, "frame"))
    # Chromium's own error page in the frame, not the mock's page.
    assert browser.execute_script("return location.href") == "chrome-error://chromewebdata/"
    assert browser.find_elements(By.CSS_SELECTOR, PAGES[kind]) == []
    assert browser.find_elements(By.ID, "blank") == []  # nor the app's page it showed before
    # Beside it, the app's own page renders in a frame.
    browser.switch_to.default_content()
    browser.switch_to.frame(browser.find_element(By.ID, "control"))
    assert browser.find_element(By.ID, "blank").text == "app"
    browser.switch_to.default_content()
    if "fields" in App.target:  # the mock was reached (its ticket is spent), yet nothing of its page ran
        assert requests.post(f"{mock.url}/auth/authorize", data=App.target["fields"], timeout=10).status_code == 400
    assert callbacks() == []


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_authorize_pages_opened_top_level_render(fresh, kind):
    mock, browser, base = fresh
    target = request_of(mock, kind)
    if "url" in target:
        browser.get(target["url"])
    else:  # the same POST as the framed one, into this window
        App.fields = target["fields"]
        browser.get(f"{base}/post")
    if kind == "form_post":  # the relay page renders and posts on to the callback at once
        wait(browser, lambda b: b.find_elements(By.ID, "done"))
        [(method, body)] = callbacks()
        assert method == "POST" and body["code"].startswith("c") and body["state"] == "s1", body
        return
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, PAGES[kind]))
    if kind == "consent":
        assert browser.find_element(By.ID, "continue").is_displayed() and browser.find_element(By.ID, "cancel").is_displayed()
    if kind == "error":
        assert browser.find_element(By.ID, "error-code").text == "invalid_request"
    assert callbacks() == []


def test_consent_post_from_another_site_lands_on_apples_error_page(fresh):
    mock, browser, base = fresh
    App.fields = {"client_id": "com.example.web", "redirect_uri": App.redirect_uri, "response_type": "code",
                  "response_mode": "form_post", "state": "s1", "mock_user": "alice", "mock_action": "continue"}
    browser.get(f"{base}/post")
    code = wait(browser, lambda b: b.find_elements(By.ID, "error-code"))[0]
    assert code.text == "invalid_request"
    assert browser.current_url == f"{mock.url}/auth/authorize"
    assert callbacks() == []


def test_consent_page_own_continue_signs_in(fresh):
    mock, browser, _ = fresh
    browser.get(authorize_url(mock))
    wait(browser, lambda b: b.find_elements(By.ID, "consent"))
    browser.find_element(By.ID, "continue").click()
    wait(browser, lambda b: b.find_elements(By.ID, "done"))
    [(method, body)] = callbacks()
    assert method == "POST" and body["code"].startswith("c") and body["state"] == "s1", body
    assert browser.current_url == App.redirect_uri


def test_consent_page_posts_once_and_refuses_the_second_submit(world):
    mock, _, _ = world
    fields = {**consent_fields(mock), "mock_user": "alice", "mock_action": "continue"}
    first = requests.post(f"{mock.url}/auth/authorize", data=fields, timeout=10)
    assert first.status_code == 200, first.text
    relay = hidden_fields(first.text)
    assert relay["code"].startswith("c") and relay["state"] == "s1", relay
    assert f'action="{App.redirect_uri}"' in first.text
    second = requests.post(f"{mock.url}/auth/authorize", data=fields, timeout=10)
    assert second.status_code == 400
    assert 'id="error-code">invalid_request<' in second.text and "code" not in hidden_fields(second.text)
    # Nor does a value the mock never issued pass.
    made_up = requests.post(f"{mock.url}/auth/authorize", data={**fields, "mock_page": "0" * 32}, timeout=10)
    assert made_up.status_code == 400 and 'id="error-code">invalid_request<' in made_up.text
