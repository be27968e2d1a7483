"""A real browser (Debian's headless Chromium through chromedriver) signs in on the consent
page through form_post into a small callback server, on a first and a second login."""
import http.server
import json
import os
import shutil
import urllib.parse

import pytest

from conftest import MockProcess, answer_html, headless_chromium, serve_http, web_scenario

CHROMEDRIVER = shutil.which("chromedriver")
if CHROMEDRIVER is None and os.environ.get("CI") != "true":
    pytest.skip("chromium-driver is not installed (CI installs it)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Callback(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        Callback.received.append(dict(urllib.parse.parse_qsl(body)))
        answer_html(self, b"<html><body><h1 id='done'>signed in</h1></body></html>")

    def log_message(self, *args):
        pass


@pytest.fixture
def world(tmp_path):
    callback = serve_http(Callback)
    redirect_uri = f"http://127.0.0.1:{callback.server_port}/callback"
    mock = MockProcess("--scenario", web_scenario(tmp_path / "scenario.json", redirect_uri))
    browser = headless_chromium(CHROMEDRIVER)
    Callback.received.clear()
    yield mock, browser, redirect_uri
    browser.quit()
    mock.stop()
    callback.shutdown()


def sign_in(browser, mock, redirect_uri, state):
    query = urllib.parse.urlencode({"client_id": "com.example.web", "redirect_uri": redirect_uri, "response_type": "code id_token",
                                    "response_mode": "form_post", "scope": "name email", "state": state, "nonce": "n-" + state})
    browser.get(f"{mock.url}/auth/authorize?{query}")
    assert browser.title == "Sign in with Apple"
    return browser


def test_browser_signs_in_through_form_post_first_and_second_time(world):
    mock, browser, redirect_uri = world
    sign_in(browser, mock, redirect_uri, "first")
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=bob]").click()
    browser.find_element(By.NAME, "mock_given_name").send_keys("Robert")
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_email][value=share]").click()
    browser.find_element(By.ID, "continue").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "done"))
    first = Callback.received[-1]
    assert first["state"] == "first"
    assert first["code"].startswith("c") and first["id_token"].count(".") == 2
    assert json.loads(first["user"]) == {"name": {"firstName": "Robert", "lastName": "Bobson"}, "email": "bob@example.com"}

    sign_in(browser, mock, redirect_uri, "second")
    browser.find_element(By.CSS_SELECTOR, "input[name=mock_user][value=bob]").click()
    browser.find_element(By.ID, "continue").click()
    WebDriverWait(browser, 60).until(lambda b: len(Callback.received) == 2)
    second = Callback.received[-1]
    assert second["state"] == "second"
    assert "user" not in second, "name and email arrive on the first authorization only"


def test_browser_cancel_posts_user_cancelled_authorize(world):
    mock, browser, redirect_uri = world
    sign_in(browser, mock, redirect_uri, "cancelled")
    browser.find_element(By.ID, "cancel").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "done"))
    assert Callback.received[-1] == {"error": "user_cancelled_authorize", "state": "cancelled"}
