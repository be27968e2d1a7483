"""Sign in with Apple JS in stand-in mode (issue 40): the mock serves HTTPS as appleid.apple.com,
and Debian's headless Chromium reaches it under Apple's names without root: --host-resolver-rules
sends appleid.apple.com and appleid.cdn-apple.com to the mock's port, and
--ignore-certificate-errors-spki-list trusts the mock's certificate and no other. The popup's
origin is then exactly https://appleid.apple.com, the origin Apple's appleid.auth.js checks.

Apple's script cannot be fetched here (no outside network), so a page written here listens the
way it does: it opens the popup itself, takes a message only from https://appleid.apple.com,
JSON.parses the string, requires method "oauthDone", resolves with data or rejects when data has
`error`, closes the popup, and rejects with popup_closed_by_user when the popup closes first. Its
backend redeems the code at the mock's /auth/token over HTTPS and verifies the id_token with
PyJWT (at the mock's loopback address: Python cannot be given Apple's names without root;
test_tls.py's network-namespace test does that).

The mock's own script, loaded from https://appleid.cdn-apple.com, signs in too. The browser blocks
popups as a user's does, so the script's own errors show: popup_blocked_by_browser without a
user gesture, user_trigger_new_signin_flow for a first sign-in a second one replaces.

One mock, web app and browser for the module; each test starts from a fresh page load."""
import base64
import hashlib
import http.server
import json
import os
import shutil
import ssl

import jwt
import pytest
import requests

from test_siwa_js_apple import CHALLENGE, DOCUMENTED_PAGE, SCRIPT_PATH, VERIFIER
from conftest import MockProcess, answer_html, answer_json, client_secret, headless_chromium, run_cli, serve_http, web_scenario

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

APPLE = "https://appleid.apple.com"
CDN_SCRIPT = "https://appleid.cdn-apple.com/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"

# A page that opens the popup and listens exactly as Apple's appleid.auth.js does.
APPLE_STYLE_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>
<button id="sign-in" type="button">Sign in with Apple</button>
<script>
var APPLE = "https://appleid.apple.com";
window.seen = [];      // every message this window receives, before any check
window.outcomes = [];
window.addEventListener("message", function (event) {{ window.seen.push({{origin: event.origin, type: typeof event.data}}); }});

function signIn() {{
  return new Promise(function (resolve, reject) {{
    var query = new URLSearchParams({{client_id: "com.example.web", redirect_uri: "{redirect_uri}",
      response_type: "code id_token", scope: "name email", response_mode: "web_message",
      state: "st-standin", nonce: "n-standin", frame_id: "f-1", m: "12", v: "1.1.6"}});
    var popup = window.open(APPLE + "/auth/authorize?" + query.toString().replace(/\\+/g, "%20"),
                            "AppleAuthentication", "width=700,height=700");
    if (!popup) {{ reject({{error: "popup_blocked_by_browser"}}); return; }}
    var timer = setInterval(function () {{
      if (popup.closed) {{ finish(); reject({{error: "popup_closed_by_user"}}); }}
    }}, 100);
    function finish() {{
      clearInterval(timer);
      window.removeEventListener("message", onMessage);
      if (!popup.closed) popup.close();
    }}
    function onMessage(event) {{
      if (event.origin !== APPLE) return;
      var message;
      try {{ message = JSON.parse(event.data); }} catch (ignored) {{ return; }}
      if (!message || message.method !== "oauthDone") return;
      finish();
      if (message.data.error) reject(message.data); else resolve(message.data);
    }}
    window.addEventListener("message", onMessage);
  }});
}}

document.getElementById("sign-in").addEventListener("click", function () {{
  signIn().then(function (data) {{
    return fetch("/session", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(data)}})
      .then(function (answer) {{ return answer.json(); }})
      .then(function (session) {{ window.outcomes.push({{kind: "success", data: data, session: session}}); }});
  }}, function (error) {{ window.outcomes.push({{kind: "failure", detail: error}}); }});
}});
</script>
</body></html>
"""

# A page that keeps Apple's script URL: under stand-in it loads the mock's script.
CDN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script src="{script}"></script>
</head><body>
<button id="sign-in" type="button">Sign in with Apple</button>
<script>
AppleID.auth.init({{clientId: "com.example.web", scope: "name email", redirectURI: "{redirect_uri}", state: "st-cdn", usePopup: true}});
window.calls = [];  // one entry per signIn(), its outcome once settled
function start() {{
  var call = window.calls.length;
  window.calls.push(null);
  AppleID.auth.signIn().then(function (data) {{ window.calls[call] = {{kind: "success", detail: data}}; }},
                             function (error) {{ window.calls[call] = {{kind: "failure", detail: error}}; }});
}}
document.getElementById("sign-in").addEventListener("click", start);
</script>
</body></html>
"""


class App(http.server.BaseHTTPRequestHandler):
    """The web app: its two pages, and its backend's /session, which redeems and verifies."""
    mock = ca = redirect_uri = ""

    def do_GET(self):
        if self.path == "/cdn":
            page = CDN_PAGE.format(script=CDN_SCRIPT, redirect_uri=App.redirect_uri)
        elif self.path == "/documented":  # the page written from Apple's documentation, with Apple's script URL
            page = DOCUMENTED_PAGE.format(redirect_uri=App.redirect_uri, challenge=CHALLENGE, head="", button="",
                                          mock="https://appleid.cdn-apple.com", script=SCRIPT_PATH)
        else:
            page = APPLE_STYLE_PAGE.format(redirect_uri=App.redirect_uri)
        answer_html(self, page.encode())

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        discovery = requests.get(f"{App.mock}/.well-known/openid-configuration", verify=App.ca, timeout=10).json()
        tokens = requests.post(f"{App.mock}/auth/token", verify=App.ca, timeout=10, data={
            "grant_type": "authorization_code", "code": data["authorization"]["code"], "redirect_uri": App.redirect_uri,
            "client_id": "com.example.web", "client_secret": client_secret()}).json()
        keys = jwt.PyJWKClient(f"{App.mock}/auth/keys", ssl_context=ssl.create_default_context(cafile=App.ca))
        session = {"jwks_uri": discovery["jwks_uri"]}
        for name, token in (("id_token", data["authorization"]["id_token"]), ("redeemed", tokens["id_token"])):
            session[name] = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"],
                                       audience="com.example.web", issuer=APPLE)
        answer_json(self, session)

    def log_message(self, *args):
        pass


def spki_sha256(certificate_pem):
    """What --ignore-certificate-errors-spki-list takes: base64 of the SHA-256 of the public key's DER."""
    key = x509.load_pem_x509_certificate(certificate_pem).public_key()
    return base64.b64encode(hashlib.sha256(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).digest()).decode()


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    directory = tmp_path_factory.mktemp("standin")
    made = run_cli("tls", "generate", "--out", str(directory / "tls"))
    assert made.returncode == 0, made.stderr
    app = serve_http(App)
    App.redirect_uri = f"http://127.0.0.1:{app.server_port}/callback"
    mock = MockProcess("--scenario", web_scenario(directory / "scenario.json", App.redirect_uri), "--base-url", APPLE,
                       "--tls-cert", str(directory / "tls" / "cert.pem"), "--tls-key", str(directory / "tls" / "key.pem"))
    App.mock, App.ca = mock.url, str(directory / "tls" / "ca.pem")
    port = mock.url.rsplit(":", 1)[1]
    browser = headless_chromium(
        CHROMEDRIVER, f"--host-resolver-rules=MAP appleid.apple.com 127.0.0.1:{port}, MAP appleid.cdn-apple.com 127.0.0.1:{port}",
        f"--ignore-certificate-errors-spki-list={spki_sha256((directory / 'tls' / 'cert.pem').read_bytes())}", block_popups=True)
    yield browser, app.server_port
    browser.quit()
    mock.stop()
    app.shutdown()


@pytest.fixture
def world(standin):
    """The module's browser and app port; afterwards, only the page's window is left open."""
    browser, port = standin
    main = browser.current_window_handle
    yield browser, port
    for handle in browser.window_handles:
        if handle != main:
            browser.switch_to.window(handle)
            browser.close()
    browser.switch_to.window(main)


def wait(browser, condition, seconds=10):
    return WebDriverWait(browser, seconds, poll_frequency=0.1).until(condition)


def click_and_enter_popup(browser):
    """Clicks the page's button, switches to the popup once its consent form shows; returns the page's handle."""
    main = browser.current_window_handle
    before = set(browser.window_handles)
    browser.find_element(By.ID, "sign-in").click()
    popup = wait(browser, lambda b: set(b.window_handles) - before)
    browser.switch_to.window(popup.pop())
    wait(browser, lambda b: b.find_elements(By.ID, "consent"))
    return main


def settled(browser, name, count=1):
    """The page's `window[name]` once it has `count` settled entries."""
    wait(browser, lambda b: len([entry for entry in b.execute_script(f"return window.{name}") if entry]) >= count, 20)
    return browser.execute_script(f"return window.{name}")


def test_standin_apple_style_listener_signs_in_and_backend_redeems_and_verifies(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/")
    main = click_and_enter_popup(browser)
    assert browser.execute_script("return location.origin") == APPLE
    assert "response_mode=web_message" in browser.current_url
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=carol]").click()
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_email][value=share]").click()
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    [outcome] = settled(browser, "outcomes")
    assert outcome["kind"] == "success", outcome
    data, session = outcome["data"], outcome["session"]
    assert sorted(data) == ["authorization", "user"] and data["user"]["email"] == "carol@example.com"
    assert sorted(data["authorization"]) == ["code", "id_token", "state"] and data["authorization"]["state"] == "st-standin"
    assert session["jwks_uri"] == f"{APPLE}/auth/keys"
    assert session["id_token"]["nonce"] == "n-standin"
    assert session["id_token"]["sub"] == session["redeemed"]["sub"]
    # The one message the page received came from Apple's origin, as a string.
    assert browser.execute_script("return window.seen") == [{"origin": APPLE, "type": "string"}]
    wait(browser, lambda b: len(b.window_handles) == 1)  # the listener closed the popup


def test_standin_apple_style_listener_rejects_user_cancelled_authorize_on_cancel(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/")
    main = click_and_enter_popup(browser)
    browser.find_element(By.ID, "cancel").click()
    browser.switch_to.window(main)
    assert settled(browser, "outcomes") == [{"kind": "failure", "detail": {"error": "user_cancelled_authorize"}}]
    wait(browser, lambda b: len(b.window_handles) == 1)


def test_standin_apple_style_listener_rejects_popup_closed_by_user_when_the_popup_closes(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/")
    main = click_and_enter_popup(browser)
    browser.close()
    browser.switch_to.window(main)
    assert settled(browser, "outcomes") == [{"kind": "failure", "detail": {"error": "popup_closed_by_user"}}]
    assert browser.execute_script("return window.seen") == []


def test_standin_apple_style_listener_on_another_origin_receives_nothing(world):
    browser, port = world
    # The same page at localhost: another origin than the registered 127.0.0.1 redirect URI.
    browser.get(f"http://localhost:{port}/")
    main = click_and_enter_popup(browser)
    browser.find_element(By.ID, "continue").click()
    wait(browser, lambda b: b.find_element(By.ID, "status").text == "You can close this window.")
    browser.switch_to.window(main)
    browser.execute_script("return new Promise(function (done) { setTimeout(done, 1500); })")
    assert browser.execute_script("return window.seen") == []
    assert browser.execute_script("return window.outcomes") == []


def test_standin_mock_script_from_the_cdn_name_signs_in_and_ignores_a_message_from_the_page(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/cdn")
    assert browser.execute_script("return document.scripts[0].src") == CDN_SCRIPT
    main = click_and_enter_popup(browser)
    assert browser.current_url.startswith(f"{APPLE}/auth/authorize?")
    # The twin first: the right envelope from the page's own origin, while the sign-in waits, is ignored.
    browser.switch_to.window(main)
    browser.execute_script("window.postMessage(JSON.stringify({method: 'oauthDone', data: {authorization: {code: 'forged'}}}), '*')")
    browser.switch_to.window(next(handle for handle in browser.window_handles if handle != main))
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    [call] = settled(browser, "calls")
    assert call["kind"] == "success", call
    assert call["detail"]["authorization"]["state"] == "st-cdn"
    assert call["detail"]["authorization"]["code"] != "forged"
    wait(browser, lambda b: len(b.window_handles) == 1)


def test_standin_mock_script_rejects_popup_blocked_by_browser_without_a_user_gesture(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/cdn")
    browser.execute_script("start()")  # not a user gesture: the browser blocks the popup
    assert settled(browser, "calls") == [{"kind": "failure", "detail": {"error": "popup_blocked_by_browser"}}]
    assert len(browser.window_handles) == 1
    # The twin: the same call from a click opens the popup.
    click_and_enter_popup(browser)
    assert browser.execute_script("return location.origin") == APPLE


def test_standin_mock_script_rejects_the_first_sign_in_with_user_trigger_new_signin_flow(world):
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/cdn")
    main = click_and_enter_popup(browser)
    first = browser.current_window_handle
    browser.switch_to.window(main)
    main = click_and_enter_popup(browser)  # a second signIn() while the first popup is open
    assert browser.current_window_handle != first
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    calls = settled(browser, "calls", 2)
    assert calls[0] == {"kind": "failure", "detail": {"error": "user_trigger_new_signin_flow"}}
    # The twin: the sign-in that replaced it resolves.
    assert calls[1]["kind"] == "success" and calls[1]["detail"]["authorization"]["state"] == "st-cdn", calls[1]
    assert first not in browser.window_handles


def test_standin_documented_page_with_apples_script_url_signs_in_with_pkce(world):
    """The page of test_siwa_js_apple.py, unchanged but for Apple's script URL: init in
    AppleIDSigInLoaded, usePopup and PKCE, the promise and event.detail.data."""
    browser, port = world
    browser.get(f"http://127.0.0.1:{port}/documented")
    wait(browser, lambda b: b.execute_script("return window.loaded") == 1)
    main = click_and_enter_popup(browser)
    assert browser.execute_script("return location.origin") == APPLE
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    wait(browser, lambda b: len(b.execute_script("return window.outcomes")) == 2, 20)
    event, promise = browser.execute_script("return window.outcomes")
    assert (event["kind"], promise["kind"]) == ("event", "promise"), (event, promise)
    assert event["detail"]["data"] == promise["data"] and event["detail"]["authorization"] == promise["data"]["authorization"]
    assert browser.execute_script("return window.opened[0][0]").startswith(f"{APPLE}/auth/authorize?client_id=com.example.web&")
    form = {"grant_type": "authorization_code", "code": promise["data"]["authorization"]["code"], "redirect_uri": App.redirect_uri,
            "client_id": "com.example.web", "client_secret": client_secret()}
    without = requests.post(f"{App.mock}/auth/token", data=form, verify=App.ca, timeout=10)
    assert (without.status_code, without.json()["error"]) == (400, "invalid_grant")
    redeemed = requests.post(f"{App.mock}/auth/token", data={**form, "code_verifier": VERIFIER}, verify=App.ca, timeout=10)
    assert redeemed.status_code == 200, redeemed.text
