"""Mail to Hide My Email users, through Python's own smtplib as the backend's mailer: the mock's
SMTP port behaves as Apple's Private Email Relay on both relay domains, and forwards on to a
second SMTP listener (another mock's port, standing in for Mailpit)."""
import json
import pathlib
import smtplib
import tempfile
import urllib.request
from email.message import EmailMessage

import pytest

from conftest import MockProcess, run_cli

REFUSAL = "5.1.1 <{}>: unauthorized sender"
UNKNOWN = "5.1.1 <{}>: user not found"


class MailMock(MockProcess):
    """A mock with its SMTP port open; `smtp_port` is the one the second start-up line names."""

    def __init__(self, *args):
        super().__init__("--smtp-port", "0", *args)
        line = self.process.stdout.readline().strip()
        assert line.startswith("smtp on smtp://127.0.0.1:"), line
        self.smtp_port = int(line.rsplit(":", 1)[1])

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.load(response)

    def post(self, path, body):
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def relay(self, user, team="MOCKTEAM01"):
        account = next(u for u in self.get("/__mock/users")["users"] if u["id"] == user)
        return next(t["relay_email"] for t in account["teams"] if t["team_id"] == team)


def scenario_file():
    """The built-in scenario (bob on privaterelay.appleid.com, carol on private.icloud.com), plus a second team with its own sources."""
    result = run_cli("scenario", "print")
    assert result.returncode == 0, result.stderr
    scenario = json.loads(result.stdout)
    team = json.loads(json.dumps(scenario["teams"][0]))
    team.update({"team_id": "OTHERTEAM1", "notification_url": None,
                 "clients": [{"client_id": "org.other.app", "type": "app_id"}],
                 "email_sources": {"domains": ["other.example"], "addresses": []}})
    team["developer_keys"][0]["key_id"] = "MOCKKEY002"
    scenario["teams"].append(team)
    path = pathlib.Path(tempfile.mkdtemp()) / "scenario.json"
    path.write_text(json.dumps(scenario))
    return str(path)


@pytest.fixture(scope="module")
def relay():
    server = MailMock("--scenario", scenario_file())
    yield server
    server.stop()


def welcome(sender, recipient):
    message = EmailMessage()
    message["From"] = sender
    message["To"] = recipient
    message["Subject"] = "Welcome ✓"
    message.set_content("Hello\n.a line that starts with a dot\n")
    message.add_alternative("<p>Hello</p>", subtype="html")
    return message


def send(server, sender, recipient):
    with smtplib.SMTP("127.0.0.1", server.smtp_port, timeout=30) as smtp:
        smtp.send_message(welcome(sender, recipient))


def test_registered_sender_reaches_relay_users_on_both_domains(relay):
    bob, carol = relay.relay("bob"), relay.relay("carol")
    assert bob.endswith("@privaterelay.appleid.com") and carol.endswith("@private.icloud.com")
    after = max([m["id"] for m in relay.get("/__mock/mail")["messages"]], default=0)
    for address, real in [(bob, "bob@example.com"), (carol, "carol@example.com")]:
        send(relay, "noreply@example.com", address)
        message = relay.get(f"/__mock/mail?after={after}&wait=10")["messages"][0]
        after = message["id"]
        assert message["recipients"] == [{"address": address, "verdict": "forwarded", "real_address": real,
                                          "user": real.split("@")[0], "team_id": "MOCKTEAM01", "reason": None, "reply": None}]
        assert message["subject"] == "Welcome ✓"
        assert message["text"] == "Hello\r\n.a line that starts with a dot\r\n"
        assert message["html"] == "<p>Hello</p>\r\n"


@pytest.mark.parametrize("sender,team", [
    ("noreply@example.org", "MOCKTEAM01"),        # not registered
    ("news@other.example", "MOCKTEAM01"),         # registered, by another team
])
def test_unregistered_and_other_team_senders_get_550(relay, sender, team):
    bob = relay.relay("bob", team)
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(relay, sender, bob)
    assert refused.value.recipients == {bob: (550, REFUSAL.format(sender).encode())}
    # The twin: the same team's registered domain gets through.
    send(relay, "noreply@example.com", bob)


def test_unknown_relay_address_gets_user_not_found_naming_it(relay):
    unknown = "zzzzzzzzzz@private.icloud.com"
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(relay, "noreply@example.com", unknown)
    assert refused.value.recipients == {unknown: (550, UNKNOWN.format(unknown).encode())}
    # The twin: carol's real relay address on the same domain is forwarded.
    send(relay, "noreply@example.com", relay.relay("carol"))


def test_other_teams_sender_reaches_its_own_teams_relay_address(relay):
    send(relay, "news@other.example", relay.relay("bob", "OTHERTEAM1"))


def test_forwarding_off_by_the_event_then_on_again_and_a_deleted_account(relay):
    bob = relay.relay("bob")
    relay.post("/__mock/sign-in", {"user": "bob", "client_id": "com.example.app"})
    relay.post("/__mock/events", {"type": "email-disabled", "user": "bob", "client_id": "com.example.app"})
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(relay, "noreply@example.com", bob)
    assert refused.value.recipients[bob][0] == 550
    relay.post("/__mock/events", {"type": "email-enabled", "user": "bob", "client_id": "com.example.app"})
    send(relay, "noreply@example.com", bob)
    relay.post("/__mock/events", {"type": "account-deleted", "user": "bob", "client_id": "com.example.app"})
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(relay, "noreply@example.com", bob)
    assert refused.value.recipients == {bob: (550, UNKNOWN.format(bob).encode())}
    last = relay.get("/__mock/mail")["messages"][-1]["recipients"][0]
    assert (last["verdict"], last["reason"]) == ("refused", "bob deleted their Apple Account")


def test_forwarded_mail_arrives_at_a_second_listener_with_the_real_address():
    catcher = MailMock()
    try:
        server = MailMock("--mail-forward", f"smtp://127.0.0.1:{catcher.smtp_port}")
        try:
            bob = server.relay("bob")
            send(server, "noreply@example.com", bob)
            caught = catcher.get("/__mock/mail?wait=10")["messages"]
            assert [r["address"] for r in caught[0]["recipients"]] == ["bob@example.com"]
            assert caught[0]["recipients"][0]["verdict"] == "direct"
            headers = {h["name"]: h["value"] for h in caught[0]["headers"]}
            assert headers["Delivered-To"] == "bob@example.com"
            assert headers["To"] == bob
            assert caught[0]["subject"] == "Welcome ✓"
        finally:
            server.stop()
    finally:
        catcher.stop()


def test_cli_mail_lists_and_shows(relay):
    send(relay, "noreply@example.com", "ops@example.net")
    listed = run_cli("mail", "--server", relay.url)
    assert listed.returncode == 0, listed.stderr
    assert 'direct ops@example.net  from <noreply@example.com>  "Welcome ✓"' in listed.stdout
    newest = relay.get("/__mock/mail")["messages"][-1]["id"]
    raw = run_cli("mail", "show", str(newest), "--raw", "--server", relay.url)
    assert raw.returncode == 0 and "To: ops@example.net" in raw.stdout
    for bad, message in [(["mail", "show", "x"], 'show expects a message id (digits), got "x"'),
                         (["mail", "clear", "--raw"], "--raw goes with show"),
                         (["mail", "burn"], 'unknown mail command "burn"')]:
        result = run_cli(*bad, "--server", relay.url)
        assert result.returncode == 2 and message in result.stderr, (bad, result.stderr)


def test_serve_refuses_bad_mail_flags():
    for args, message in [(["--mail-forward", "http://x:25", "--smtp-port", "0"], "--mail-forward expects smtp://HOST:PORT"),
                          (["--mail-forward", "smtp://127.0.0.1:2525"], "--mail-forward needs --smtp-port"),
                          (["--smtp-port", "70000"], "--smtp-port expects an integer from 0 to 65535")]:
        result = run_cli("serve", "--port", "0", *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
