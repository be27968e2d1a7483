"""Sign in with Apple JS in a real browser (Debian's headless Chromium through chromedriver,
issue 40): a page loads the mock's appleid.auth.js, the user clicks the button and consents in
the popup (response_mode=web_message), the page receives code and id_token, and its backend
redeems the code and verifies the id_token. The second sign-in carries no `user`; a closed popup
rejects with popup_closed_by_user, Cancel with user_cancelled_authorize; the same page on
another origin receives nothing."""
import http.server
import json
import os
import shutil

import jwt
import pytest
import requests

from conftest import MockProcess, answer_html, answer_json, client_secret, headless_chromium, serve_http, web_scenario

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SCRIPT_PATH = "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<meta name="appleid-signin-client-id" content="com.example.web">
<meta name="appleid-signin-scope" content="name email">
<meta name="appleid-signin-redirect-uri" content="{redirect_uri}">
<meta name="appleid-signin-state" content="st-1">
<meta name="appleid-signin-nonce" content="n-1">
<meta name="appleid-signin-use-popup" content="true">
<script>
// The test drives the script's timers, as fake timers do: an interval is kept, never started, and
// the test runs the script's popup check when it chooses instead of racing its 100 ms tick.
window.intervals = [];
window.setInterval = function (callback) {{ window.intervals.push(callback); return window.intervals.length; }};
</script>
<script src="{mock}{script}"></script>
</head><body>
<div id="appleid-signin" data-color="black" data-border="true" data-type="sign in"></div>
<pre id="outcome"></pre>
<script>
window.outcomes = [];
function show(kind, detail) {{
  window.outcomes.push({{kind: kind, detail: detail}});
  document.getElementById("outcome").textContent = kind;
}}
document.addEventListener("AppleIDSignInOnFailure", function (event) {{ show("failure", event.detail); }});
document.addEventListener("AppleIDSignInOnSuccess", function (event) {{
  // The backend redeems the code and verifies the id_token.
  fetch("/session", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(event.detail)}})
    .then(function (answer) {{ return answer.json(); }})
    .then(function (session) {{ show("success", {{data: event.detail, session: session}}); }});
}});
</script>
</body></html>
"""


class App(http.server.BaseHTTPRequestHandler):
    """The web app: its page and its backend's /session, which redeems and verifies."""
    mock = ""
    redirect_uri = ""

    def do_GET(self):
        answer_html(self, PAGE.format(mock=App.mock, script=SCRIPT_PATH, redirect_uri=App.redirect_uri).encode())

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        tokens = requests.post(f"{App.mock}/auth/token", data={
            "grant_type": "authorization_code", "code": data["authorization"]["code"], "redirect_uri": App.redirect_uri,
            "client_id": "com.example.web", "client_secret": client_secret()}, timeout=10).json()
        session = {}
        for name in ("id_token", "redeemed"):
            token = data["authorization"]["id_token"] if name == "id_token" else tokens["id_token"]
            key = jwt.PyJWKClient(f"{App.mock}/auth/keys").get_signing_key_from_jwt(token)
            session[name] = jwt.decode(token, key.key, algorithms=["RS256"], audience="com.example.web",
                                       issuer="https://appleid.apple.com")
        answer_json(self, session)

    def log_message(self, *args):
        pass


@pytest.fixture
def world(tmp_path):
    app = serve_http(App)
    App.redirect_uri = f"http://127.0.0.1:{app.server_port}/callback"
    mock = MockProcess("--scenario", web_scenario(tmp_path / "scenario.json", App.redirect_uri))
    App.mock = mock.url
    browser = headless_chromium(CHROMEDRIVER)
    yield mock, browser, app.server_port
    browser.quit()
    mock.stop()
    app.shutdown()


def open_popup(browser, page_url):
    """Loads the page, clicks the Apple button and switches to the popup; returns the page's handle."""
    browser.get(page_url)
    button = WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#appleid-signin [role=button]"))[0]
    assert button.text == "Sign in with Apple"
    main = browser.current_window_handle
    button.click()
    WebDriverWait(browser, 60).until(lambda b: len(b.window_handles) == 2)
    browser.switch_to.window(next(h for h in browser.window_handles if h != main))
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "consent"))
    return main


def outcomes(browser, count=1):
    WebDriverWait(browser, 60).until(lambda b: len(b.execute_script("return window.outcomes")) >= count)
    return browser.execute_script("return window.outcomes")


def test_siwa_js_popup_signs_in_and_backend_verifies_second_time_without_user(world):
    mock, browser, port = world
    page = f"http://127.0.0.1:{port}/"
    main = open_popup(browser, page)
    assert "response_mode=web_message" in browser.current_url
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=bob]").click()
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_email][value=share]").click()
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    first = outcomes(browser)[0]
    assert first["kind"] == "success", first
    data, session = first["detail"]["data"], first["detail"]["session"]
    # The event's detail: the data's fields, and the same object as `data` (Apple's sample reads detail.data).
    assert sorted(data) == ["authorization", "data", "user"]
    assert data["data"] == {"authorization": data["authorization"], "user": data["user"]}
    assert sorted(data["authorization"]) == ["code", "id_token", "state"]
    assert data["authorization"]["state"] == "st-1"
    assert data["user"] == {"email": "bob@example.com", "name": {"firstName": "Bob", "lastName": "Bobson"}}
    assert session["id_token"]["nonce"] == "n-1"
    assert session["id_token"]["sub"] == session["redeemed"]["sub"]
    WebDriverWait(browser, 60).until(lambda b: len(b.window_handles) == 1)  # the script closed the popup

    # The second sign-in: the same user, no `user` this time.
    open_popup(browser, page)
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=bob]").click()
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    second = outcomes(browser)[0]
    assert second["kind"] == "success", second
    assert sorted(second["detail"]["data"]) == ["authorization", "data"]
    assert second["detail"]["session"]["id_token"]["sub"] == session["id_token"]["sub"]


def run_popup_check(browser, main):
    """Runs the script's popup check now, twice (it takes the page as loaded once it saw it
    cross-origin and open on two checks in a row), from the page, and comes back to the popup."""
    popup = browser.current_window_handle
    browser.switch_to.window(main)
    browser.execute_script("window.intervals.forEach(function (tick) { tick(); tick(); })")
    browser.switch_to.window(popup)


def test_siwa_js_closed_popup_rejects_popup_closed_by_user(world):
    mock, browser, port = world
    main = open_popup(browser, f"http://127.0.0.1:{port}/")
    # The script sees the consent page loaded (cross-origin), then the popup closed: the user's close.
    run_popup_check(browser, main)
    browser.close()
    browser.switch_to.window(main)
    browser.execute_script("window.intervals.forEach(function (tick) { tick(); })")
    assert outcomes(browser) == [{"kind": "failure", "detail": {"error": "popup_closed_by_user", "data": {"error": "popup_closed_by_user"}}}]


def test_siwa_js_popup_closed_before_the_script_saw_it_load_leaves_the_sign_in_pending(world):
    # The twin: a popup seen "closed" before the script saw its page is what a page served with
    # Cross-Origin-Opener-Policy: same-origin sees while the popup stays open, so, as Apple's, the
    # sign-in stays pending (test_siwa_js_apple.py::test_cross_origin_opener_policy).
    mock, browser, port = world
    main = open_popup(browser, f"http://127.0.0.1:{port}/")
    browser.close()
    browser.switch_to.window(main)
    browser.execute_script("window.intervals.forEach(function (tick) { tick(); tick(); })")
    assert browser.execute_script("return window.outcomes") == []


def test_siwa_js_popup_seen_cross_origin_once_then_closed_leaves_the_sign_in_pending(world):
    # What a page served with Cross-Origin-Opener-Policy: same-origin can see as the popup is cut
    # off: its page cross-origin on one check, "closed" on the next. One sight is not a loaded page,
    # so the sign-in stays pending (the closed-popup test above sees it on two checks in a row).
    mock, browser, port = world
    main = open_popup(browser, f"http://127.0.0.1:{port}/")
    popup = browser.current_window_handle
    browser.switch_to.window(main)
    browser.execute_script("window.intervals.forEach(function (tick) { tick(); })")
    browser.switch_to.window(popup)
    browser.close()
    browser.switch_to.window(main)
    browser.execute_script("window.intervals.forEach(function (tick) { tick(); })")
    assert browser.execute_script("return window.outcomes") == []


def test_siwa_js_cancel_rejects_user_cancelled_authorize(world):
    mock, browser, port = world
    main = open_popup(browser, f"http://127.0.0.1:{port}/")
    browser.find_element(By.ID, "cancel").click()
    browser.switch_to.window(main)
    assert outcomes(browser) == [{"kind": "failure", "detail": {"error": "user_cancelled_authorize", "data": {"error": "user_cancelled_authorize"}}}]
    WebDriverWait(browser, 60).until(lambda b: len(b.window_handles) == 1)


def test_siwa_js_page_on_another_origin_receives_nothing(world):
    mock, browser, port = world
    # The same page at localhost: another origin than the registered 127.0.0.1 redirect URI.
    main = open_popup(browser, f"http://localhost:{port}/")
    browser.find_element(By.ID, "continue").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_element(By.ID, "status").text == "You can close this window.")
    browser.switch_to.window(main)
    browser.execute_script("return new Promise(function (done) { setTimeout(done, 1500); })")
    assert browser.execute_script("return window.outcomes") == []


def test_siwa_js_authorize_page_without_opener_refuses_to_render(world):
    mock, browser, port = world
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    query = requests.Request("GET", f"{mock.url}/auth/authorize", params={
        "client_id": "com.example.web", "redirect_uri": redirect_uri, "response_type": "code id_token",
        "response_mode": "web_message", "state": "st-1"}).prepare().url
    browser.get(query)
    assert browser.find_element(By.ID, "no-opener").text == "This page only works in the window Sign in with Apple JS opens."
    assert browser.find_elements(By.ID, "consent") == []
    # Twin: the same request as form_post shows the consent form in any window.
    browser.get(query.replace("web_message", "form_post"))
    assert browser.find_elements(By.ID, "consent") and browser.find_elements(By.ID, "no-opener") == []
