"""Shared fixtures: a live appleid-mock process on an ephemeral port."""
import contextlib
import http.server
import json
import os
import pathlib
import subprocess
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("APPLEID_MOCK_BIN", str(ROOT / ".build" / "debug" / "appleid-mock"))


class MockProcess:
    def __init__(self, *args):
        self.process = subprocess.Popen(
            [BINARY, "serve", "--port", "0", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"unexpected first line {line!r}: {self.process.stderr.read()}")
        self.url = line.removeprefix("listening on ")

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=20) == 0


@pytest.fixture
def mock():
    server = MockProcess()
    yield server
    server.stop()


def run_cli(*args):
    return subprocess.run([BINARY, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def client_secret(client="com.example.web"):
    result = run_cli("client-secret", "--client", client)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def hidden_fields(html):
    """The name/value pairs of every hidden input of a page, in order."""
    from html.parser import HTMLParser

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


def answer_html(handler, page, status=200):
    """Answers a request of an http.server handler with the HTML bytes `page`."""
    handler.send_response(status)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(page)))
    handler.end_headers()
    handler.wfile.write(page)


def serve_http(handler):
    """An http.server for `handler` on an ephemeral port of 127.0.0.1, serving on a daemon thread."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def web_scenario(path, redirect_uri, notification_url=None):
    """Writes to `path` the built-in scenario with `redirect_uri` registered for its web client
    (com.example.web) and, if given, its team's `notification_url`; returns the path as a string."""
    scenario = json.loads(run_cli("scenario", "print").stdout)
    web = next(c for c in scenario["teams"][0]["clients"] if c["client_id"] == "com.example.web")
    web["redirect_uris"].append(redirect_uri)
    if notification_url is not None:
        scenario["teams"][0]["notification_url"] = notification_url
    pathlib.Path(path).write_text(json.dumps(scenario))
    return str(path)


def answer_json(handler, value, status=200):
    """Answers a request of an http.server handler with `value` as JSON."""
    body = json.dumps(value).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def headless_chromium(chromedriver, *flags, block_popups=False):
    """Debian's Chromium, headless, through `chromedriver` (the browser tests skip without it).
    chromedriver starts Chromium with --disable-popup-blocking; `block_popups` drops that switch,
    so that, as in a user's browser, window.open without a user gesture returns null."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *flags):
        options.add_argument(flag)
    if block_popups:
        options.add_experimental_option("excludeSwitches", ["disable-popup-blocking"])
    return webdriver.Chrome(service=Service(chromedriver), options=options)


@contextlib.contextmanager
def browser_world(handler, directory, chromedriver, app_host="127.0.0.1"):
    """A browser test's world: the app `handler` on an ephemeral port of 127.0.0.1, reached as
    `app_host`; a mock on the built-in scenario with the app's /callback registered for
    com.example.web (`handler.redirect_uri`, and `handler.mock` the mock's URL); headless Chromium.
    Yields (mock, browser, the app's origin) and stops all three."""
    app = serve_http(handler)
    origin = f"http://{app_host}:{app.server_port}"
    handler.redirect_uri = origin + "/callback"
    mock = MockProcess("--scenario", web_scenario(pathlib.Path(directory) / "scenario.json", handler.redirect_uri))
    handler.mock = mock.url
    try:
        browser = headless_chromium(chromedriver)
        try:
            yield mock, browser, origin
        finally:
            browser.quit()
    finally:
        mock.stop()
        app.shutdown()
