"""Sign in with Apple JS as Apple ships it (issue 45, apple-reference §13), in headless Chromium:
a page written from Apple's documentation (init with usePopup and PKCE, waiting for
AppleIDSigInLoaded, reading the promise and event.detail.data) signs in, and its backend redeems the
code with its code_verifier and is refused without it; every leniency Apple's script does not have
throws as Apple's does, beside the valid call that works; the popup request, the button attributes
and the dev meta tags; and a page whose Cross-Origin-Opener-Policy cuts the popup off waits forever,
as with Apple, while the popup says why. The stand-in run of the same page is in
test_siwa_js_standin.py."""
import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import urllib.parse

import jwt
import pytest
import requests

from conftest import answer_json, browser_world, client_secret

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SCRIPT_PATH = "/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"
VERIFIER = "Qm9vdHN0cmFwLXZlcmlmaWVyLW9mLXRoZS1kb2N1bWVudGVkLXBhZ2U"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

# As Apple's documentation writes it: the listeners first, then the script; init once the script
# says it has loaded; the app's own button calls signIn() and keeps the promise.
DOCUMENTED_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script>
window.outcomes = [];
window.messages = [];  // every message this window receives, from any origin
window.addEventListener("message", function (event) {{ window.messages.push(event.origin); }});
window.loaded = 0;
document.addEventListener("AppleIDSigInLoaded", function () {{
  window.loaded += 1;
  AppleID.auth.init({{clientId: "com.example.web", scope: "name email", redirectURI: "{redirect_uri}", state: "st-1",
                     nonce: "n-1", usePopup: true, codeChallenge: "{challenge}", codeChallengeMethod: "S256"}});
}});
document.addEventListener("AppleIDSignInOnSuccess", function (event) {{ window.outcomes.push({{kind: "event", detail: event.detail}}); }});
document.addEventListener("AppleIDSignInOnFailure", function (event) {{ window.outcomes.push({{kind: "event-failure", detail: event.detail}}); }});
var realOpen = window.open;
window.opened = [];
window.open = function (url, target, features) {{ window.opened.push([url, target, features]); return realOpen.call(window, url, target, features); }};
function start() {{
  AppleID.auth.signIn().then(function (data) {{ window.outcomes.push({{kind: "promise", data: data}}); }},
                             function (error) {{ window.outcomes.push({{kind: "promise-failure", data: error}}); }});
}}
</script>
{head}
<script src="{mock}{script}"></script>
</head><body>
<button id="sign-in" type="button" onclick="start()">Sign in</button>
<div id="appleid-signin"{button}></div>
</body></html>
"""


# A page with the script and nothing else: no meta tags, no init.
BARE_PAGE = """<!DOCTYPE html><html><head><title>Bare</title>
<script>window.loaded = 0; document.addEventListener("AppleIDSigInLoaded", function () {{ window.loaded += 1; }});</script>
<script src="{mock}{script}"></script></head><body></body></html>
"""


class App(http.server.BaseHTTPRequestHandler):
    """The web app: its pages (`/?coop=…&head=…&button=…&script=…`, `/?bare=1`) and its backend's
    /session, which redeems the code first without the code_verifier, then with it."""
    mock = ""
    redirect_uri = ""

    def do_GET(self):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        if "bare" in query:
            page = BARE_PAGE.format(mock=App.mock, script=SCRIPT_PATH).encode()
        else:
            page = DOCUMENTED_PAGE.format(redirect_uri=App.redirect_uri, challenge=CHALLENGE, head=query.get("head", ""),
                                          button=query.get("button", ""), mock=query.get("script", App.mock), script=SCRIPT_PATH).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        if "coop" in query:
            self.send_header("Cross-Origin-Opener-Policy", query["coop"])
        self.end_headers()
        self.wfile.write(page)

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        form = {"grant_type": "authorization_code", "code": data["code"], "redirect_uri": App.redirect_uri,
                "client_id": "com.example.web", "client_secret": client_secret()}
        without = requests.post(f"{App.mock}/auth/token", data=form, timeout=10)
        redeemed = requests.post(f"{App.mock}/auth/token", data={**form, "code_verifier": VERIFIER}, timeout=10)
        answer_json(self, {"without": [without.status_code, without.json()], "with": [redeemed.status_code, redeemed.json()]})

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with browser_world(App, tmp_path_factory.mktemp("siwa"), CHROMEDRIVER) as world:
        yield world


@pytest.fixture
def page(world):
    """Loads the app's page with `query` and waits for the script; leaves only that window open."""
    mock, browser, base = world

    def load(**query):
        for handle in browser.window_handles[1:]:
            browser.switch_to.window(handle)
            browser.close()
        browser.switch_to.window(browser.window_handles[0])
        browser.get(base + "/" + ("?" + urllib.parse.urlencode(query) if query else ""))
        WebDriverWait(browser, 60).until(lambda b: b.execute_script("return window.loaded") == 1)
        return browser
    return load


def enter_popup(browser):
    main = browser.current_window_handle
    WebDriverWait(browser, 60).until(lambda b: len(b.window_handles) == 2)
    browser.switch_to.window(next(h for h in browser.window_handles if h != main))
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "consent"))
    return main


def outcomes(browser, count):
    WebDriverWait(browser, 60).until(lambda b: len(b.execute_script("return window.outcomes")) >= count)
    return browser.execute_script("return window.outcomes")


def thrown(browser, script):
    """What `script` (a function body) throws synchronously, or "returned <type>"."""
    return browser.execute_script("try { var r = (function () { " + script + " })(); return 'returned ' + "
                                  "(r instanceof Promise ? 'a Promise' : typeof r); } catch (e) { return e.message; }")


def test_documented_page_signs_in_with_pkce_and_reads_promise_and_event_detail_data(world, page):
    mock, _, _ = world
    browser = page()
    browser.find_element(By.ID, "sign-in").click()
    main = enter_popup(browser)
    browser.find_element(By.ID, "continue").click()
    browser.switch_to.window(main)
    event, promise = outcomes(browser, 2)
    assert (event["kind"], promise["kind"]) == ("event", "promise")
    url, target, features = browser.execute_script("return window.opened")[0]
    # The promise has Apple's shape; the event's detail carries it as `data` and its fields as well.
    assert sorted(promise["data"]) == ["authorization", "user"]
    assert event["detail"]["data"] == promise["data"]
    assert event["detail"]["authorization"] == promise["data"]["authorization"]
    assert sorted(event["detail"]) == ["authorization", "data", "user"]
    # The popup request as Apple's script makes it.
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert url.startswith(f"{mock.url}/auth/authorize?client_id=com.example.web&redirect_uri="), url
    assert query["code_challenge"] == CHALLENGE and query["code_challenge_method"] == "S256", query
    assert query["response_mode"] == "web_message" and query["response_type"] == "code id_token"
    assert UUID_V4.match(query["frame_id"]), query["frame_id"]
    assert (query["m"], query["v"]) == ("11", "1.5.6")  # init, then a call of signIn()
    assert target == "_blank"
    assert features.endswith(",resizable=no,location=no,menubar=no") and features.startswith("width=700,height=700,left="), features
    # The backend: refused without the verifier, as Apple refuses; redeemed with it.
    code = promise["data"]["authorization"]["code"]
    session = requests.post(App.redirect_uri.replace("/callback", "/session"), json={"code": code}, timeout=20).json()
    assert session["without"][0] == 400 and session["without"][1]["error"] == "invalid_grant", session
    assert session["with"][0] == 200, session
    claims = jwt.decode(session["with"][1]["id_token"], jwt.PyJWKClient(f"{mock.url}/auth/keys").get_signing_key_from_jwt(
        session["with"][1]["id_token"]).key, algorithms=["RS256"], audience="com.example.web", issuer="https://appleid.apple.com")
    assert claims["nonce"] == "n-1"


def test_failure_event_detail_carries_error_and_data(world, page):
    browser = page()
    browser.find_element(By.ID, "sign-in").click()
    main = enter_popup(browser)
    browser.find_element(By.ID, "cancel").click()
    browser.switch_to.window(main)
    event, promise = outcomes(browser, 2)
    assert promise == {"kind": "promise-failure", "data": {"error": "user_cancelled_authorize"}}
    assert event == {"kind": "event-failure", "detail": {"error": "user_cancelled_authorize", "data": {"error": "user_cancelled_authorize"}}}


def test_init_throws_as_apples_does_and_its_valid_twin_does_not(page):
    browser = page()
    good = '{clientId: "com.example.web", redirectURI: "%s", usePopup: %s}'
    assert thrown(browser, "AppleID.auth.init(" + good % (App.redirect_uri, '"true"') + ")") == 'The "usePopup" should be boolean.'
    assert thrown(browser, "AppleID.auth.init(" + good % (App.redirect_uri, "1") + ")") == 'The "usePopup" should be boolean.'
    assert thrown(browser, "AppleID.auth.init(" + good % (App.redirect_uri, "true") + ")") == "returned undefined"
    assert thrown(browser, 'AppleID.auth.init({redirectURI: "%s"})' % App.redirect_uri) == 'The "clientId" should be a string.'
    assert thrown(browser, 'AppleID.auth.init({clientId: 7, redirectURI: "%s"})' % App.redirect_uri) == 'The "clientId" should be a string.'
    assert thrown(browser, 'AppleID.auth.init({clientId: "com.example.web"})') == 'The "redirectURI" should be a string.'
    assert thrown(browser, 'AppleID.auth.init({clientId: "com.example.web", redirectURI: "%s", state: 5})' % App.redirect_uri) \
        == 'The "state" should be a string.'
    assert thrown(browser, 'AppleID.auth.init({clientId: "com.example.web", redirectURI: "%s", codeChallenge: {}})' % App.redirect_uri) \
        == 'The "codeChallenge" should be a string.'


def test_sign_in_before_init_throws_synchronously_and_after_init_returns_a_promise(page):
    # A page with no meta tags that never calls init: the script loads, signIn() throws at once.
    browser = page(bare=1)
    assert thrown(browser, "return AppleID.auth.signIn()") == 'The "init" function must be called first.'
    assert len(browser.window_handles) == 1
    # Twin: after init (the documented page's), a Promise.
    browser = page()
    assert thrown(browser, "return AppleID.auth.signIn()") == "returned a Promise"


def test_sign_in_overrides_only_the_requests_fields(page):
    browser = page()
    assert thrown(browser, 'return AppleID.auth.signIn("scope=email")') == 'The "signinConfig" must be "object".'
    assert thrown(browser, "return AppleID.auth.signIn([1])") == 'The "signinConfig" must be "object".'
    assert thrown(browser, "return AppleID.auth.signIn({nonce: 9})") == 'The "nonce" should be a string.'
    assert browser.execute_script("return window.opened.length") == 0
    # Twin: the request's fields are taken; the rest (the client, the mode, the response type) are not.
    assert thrown(browser, 'return AppleID.auth.signIn({scope: "email", state: "st-2", nonce: "n-2", codeChallenge: "%s", '
                           'clientId: "com.evil.web", usePopup: false, responseMode: "query", responseType: "code"})' % ("c" * 43)) \
        == "returned a Promise"
    url = browser.execute_script("return window.opened[0][0]")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert (query["client_id"], query["response_mode"], query["response_type"]) == ("com.example.web", "web_message", "code id_token")
    assert (query["scope"], query["state"], query["nonce"], query["code_challenge"]) == ("email", "st-2", "n-2", "c" * 43)


def button_of(browser):
    return browser.execute_script("""
        var host = document.getElementById("appleid-signin"), button = host.querySelector("[role=button]");
        var label = button.querySelector(".appleid-signin-label"), style = getComputedStyle(button);
        return {label: label ? label.textContent : null, aria: button.getAttribute("aria-label"), width: style.width,
                height: style.height, border: style.borderTopStyle, background: style.backgroundColor,
                radius: style.borderTopLeftRadius, justify: style.justifyContent,
                labelMargin: label ? getComputedStyle(label).marginLeft : null};""")


def test_button_honours_apples_documented_attributes(page):
    default = button_of(page())
    assert default["label"] == default["aria"] == "Sign in with Apple"
    assert default["border"] == "solid" and default["background"] == "rgb(0, 0, 0)" and default["justify"] == "center"
    styled = button_of(page(button=' data-mode="left-align" data-type="continue" data-color="white" data-border="false"'
                                   ' data-width="300" data-height="44" data-border-radius="50" data-label-position="40"'))
    assert (styled["label"], styled["width"], styled["height"]) == ("Continue with Apple", "300px", "44px")
    assert (styled["border"], styled["background"], styled["justify"]) == ("none", "rgb(255, 255, 255)", "flex-start")
    assert styled["labelMargin"] == "40px" and styled["radius"] != default["radius"]
    logo = button_of(page(button=' data-mode="logo-only" data-width="44" data-height="44"'))
    assert (logo["label"], logo["aria"], logo["width"]) == (None, "Sign in with Apple", "44px")
    # The Apple button itself starts a sign-in (m: init, then the button).
    browser = page()
    browser.find_element(By.CSS_SELECTOR, "#appleid-signin [role=button]").click()
    WebDriverWait(browser, 60).until(lambda b: b.execute_script("return window.opened.length") == 1)
    assert "&m=12&v=1.5.6" in browser.execute_script("return window.opened[0][0]")


def test_dev_meta_tags_choose_the_server_and_whose_messages_are_taken(world, page):
    mock, _, _ = world
    port = mock.url.rsplit(":", 1)[1]
    # The script comes from the mock as localhost; dev-uri sends the popup to 127.0.0.1.
    tags = f'<meta name="appleid-signin-dev-uri" content="{mock.url}">'
    for env, signs_in in (("dev", True), ("prod", False)):
        browser = page(script=f"http://localhost:{port}", head=tags + f'<meta name="appleid-signin-dev-env" content="{env}">')
        browser.find_element(By.ID, "sign-in").click()
        main = enter_popup(browser)
        assert browser.current_url.startswith(f"{mock.url}/auth/authorize?"), browser.current_url
        browser.find_element(By.ID, "continue").click()
        browser.switch_to.window(main)
        # The popup's message arrives either way; the script takes it only from the origin it trusts.
        WebDriverWait(browser, 60).until(lambda b: b.execute_script("return window.messages").count(mock.url) == 1)
        if signs_in:
            assert [o["kind"] for o in outcomes(browser, 2)] == ["event", "promise"]
        else:
            # Apple's rule: messages from appleid.apple.com only (here, the script's own origin) unless env is dev.
            assert browser.execute_script("return window.outcomes") == []


@pytest.mark.parametrize("coop, resolves", [("same-origin", False), ("same-origin-allow-popups", True)])
def test_cross_origin_opener_policy(page, coop, resolves):
    browser = page(coop=coop)
    browser.find_element(By.ID, "sign-in").click()
    main = enter_popup(browser)
    lost = browser.find_elements(By.ID, "lost-opener")
    assert bool(lost) is not resolves, browser.page_source
    browser.find_element(By.ID, "continue").click()
    if resolves:
        browser.switch_to.window(main)
        assert [o["kind"] for o in outcomes(browser, 2)] == ["event", "promise"]
        return
    # Apple's outcome: nothing is posted, the popup stays open, the promise stays pending; the popup says why.
    # The popup's page may be replaced while it is read (a loaded machine shows it): an element of
    # the page before is stale, and the wait reads the notice again from the page now shown.
    notice = WebDriverWait(browser, 60, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        lambda b: b.find_element(By.ID, "lost-opener").text)
    assert "Cross-Origin-Opener-Policy: same-origin" in notice and "same-origin-allow-popups" in notice, notice
    assert len(browser.window_handles) == 2
    browser.switch_to.window(main)
    assert browser.execute_script("return [window.outcomes, window.messages]") == [[], []]
