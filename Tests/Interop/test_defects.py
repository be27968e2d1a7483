"""Forged defective tokens (POST /__mock/tokens): PyJWT set up as a careful backend refuses every
defect, and accepts the untampered twin minted the same way just before."""
import json
import time

import jwt
import pytest
import requests

from conftest import run_cli

CLIENT = "com.example.app"
ISSUER = "https://appleid.apple.com"
DEFECTS = ["expired", "not-yet-valid", "wrong-issuer", "wrong-audience", "bad-signature", "unknown-kid", "alg-none",
           "hs256-public-key", "missing-sub", "nonce-mismatch", "retired-key", "iat-far-past"]


class CarefulVerifier:
    """What a careful backend does with an identity token: RS256 only, the key chosen by kid from
    /auth/keys (fetched again for a kid it does not know), iss, aud, exp, iat present and recent
    and not in the future, sub present, the nonce it sent compared."""

    def __init__(self, mock_url, audience=CLIENT):
        self.jwks = jwt.PyJWKClient(f"{mock_url}/auth/keys", cache_keys=False)
        self.audience = audience

    def verify(self, token, nonce=None, now=None):
        key = self.jwks.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=self.audience, issuer=ISSUER,
                            options={"require": ["iss", "aud", "exp", "iat", "sub"]})
        now = time.time() if now is None else now
        if claims["iat"] > now + 60:
            raise jwt.ImmatureSignatureError("iat is in the future")
        if now - claims["iat"] > 600:
            raise jwt.InvalidIssuedAtError("iat is more than 10 minutes old")
        if nonce is not None and claims.get("nonce") != nonce:
            raise jwt.InvalidTokenError("nonce differs from the one sent")
        return claims


def forge(mock, defect=None, **fields):
    body = {"user": "alice", "client_id": CLIENT, "nonce": "nonce-1", **fields}
    if defect:
        body["defect"] = defect
    answer = requests.post(f"{mock.url}/__mock/tokens", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("defect", DEFECTS)
def test_careful_verifier_refuses_each_defect_and_accepts_its_twin(mock, defect):
    verifier = CarefulVerifier(mock.url)
    twin = forge(mock)
    assert twin["defect"] is None and twin["check"] is None
    assert verifier.verify(twin["id_token"], nonce="nonce-1")["sub"]
    forged = forge(mock, defect)
    assert forged["defect"] == defect and forged["check"]
    with pytest.raises((jwt.InvalidTokenError, jwt.PyJWKClientError)):
        verifier.verify(forged["id_token"], nonce="nonce-1")


def test_each_defect_changes_only_what_it_names(mock):
    # A frozen clock: forged a second apart, twin and defect would differ in iat and auth_time too.
    assert requests.post(f"{mock.url}/__mock/clock", json={"freeze": True}).status_code == 200
    twin = jwt.decode(forge(mock)["id_token"], options={"verify_signature": False})
    header = jwt.get_unverified_header(forge(mock)["id_token"])
    changed = {}
    for defect in DEFECTS:
        token = forge(mock, defect)["id_token"]
        claims = jwt.decode(token, options={"verify_signature": False}) if defect != "alg-none" else json.loads(
            jwt.utils.base64url_decode(token.split(".")[1]))
        changed[defect] = ({name for name in set(twin) | set(claims) if twin.get(name) != claims.get(name)},
                           jwt.get_unverified_header(token) != header)
    assert changed["expired"] == ({"exp", "iat"}, False)
    assert changed["not-yet-valid"] == ({"exp", "iat"}, False)
    assert changed["iat-far-past"] == ({"iat"}, False)
    assert changed["wrong-issuer"] == ({"iss"}, False)
    assert changed["wrong-audience"] == ({"aud"}, False)
    assert changed["missing-sub"] == ({"sub"}, False)
    assert "sub" not in jwt.decode(forge(mock, "missing-sub")["id_token"], options={"verify_signature": False})
    assert changed["nonce-mismatch"] == ({"nonce"}, False)
    for defect in ["bad-signature"]:
        assert changed[defect] == (set(), False)
    for defect in ["unknown-kid", "alg-none", "hs256-public-key", "retired-key"]:
        assert changed[defect] == (set(), True)


def test_alg_none_has_an_empty_signature_and_hs256_is_keyed_with_the_public_pem(mock):
    none = forge(mock, "alg-none")["id_token"]
    assert none.endswith(".") and jwt.get_unverified_header(none)["alg"] == "none"
    confused = forge(mock, "hs256-public-key")["id_token"]
    kid = jwt.get_unverified_header(confused)["kid"]
    public = jwt.PyJWKClient(f"{mock.url}/auth/keys").get_signing_key(kid).key
    from cryptography.hazmat.primitives import serialization
    pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    import hashlib
    import hmac
    head, body, signature = confused.split(".")
    expected = hmac.new(pem, f"{head}.{body}".encode(), hashlib.sha256).digest()
    assert jwt.utils.base64url_decode(signature) == expected


def test_retired_key_is_signed_by_the_key_retired_last(mock):
    old = requests.get(f"{mock.url}/auth/keys").json()
    rotated = requests.post(f"{mock.url}/__mock/keys/rotate").json()
    previous = rotated.get("previous") or jwt.get_unverified_header(forge(mock)["id_token"])["kid"]
    assert requests.delete(f"{mock.url}/__mock/keys/{previous}").status_code == 200
    token = forge(mock, "retired-key")["id_token"]
    assert jwt.get_unverified_header(token)["kid"] == previous
    # A backend that cached /auth/keys from before the retirement would accept it: the signature is genuine.
    cached = jwt.PyJWKSet.from_dict(old)[previous].key
    assert jwt.decode(token, cached, algorithms=["RS256"], audience=CLIENT, issuer=ISSUER)["sub"]
    with pytest.raises(jwt.PyJWKClientError):
        CarefulVerifier(mock.url).verify(token)


def test_forged_notification_and_its_defects(mock):
    def payload(defect=None):
        body = {"kind": "notification", "user": "alice", "client_id": CLIENT, "type": "account-delete"}
        if defect:
            body["defect"] = defect
        answer = requests.post(f"{mock.url}/__mock/tokens", json=body)
        assert answer.status_code == 200, answer.text
        assert set(answer.json()) == {"payload", "defect", "check"}
        return answer.json()["payload"]

    jwks = jwt.PyJWKClient(f"{mock.url}/auth/keys", cache_keys=False)

    def verify(token):
        claims = jwt.decode(token, jwks.get_signing_key_from_jwt(token).key, algorithms=["RS256"], audience=CLIENT, issuer=ISSUER,
                            options={"require": ["iss", "aud", "exp", "iat", "jti"]})
        if abs(time.time() - claims["iat"]) > 600:
            raise jwt.InvalidIssuedAtError("iat not recent")
        events = json.loads(claims["events"]) if isinstance(claims["events"], str) else claims["events"]
        if not events.get("sub"):
            raise jwt.MissingRequiredClaimError("events.sub")
        return events

    assert verify(payload())["type"] == "account-deleted"  # Apple's wire name (compatibility.account_deletion_event_type)
    for defect in [d for d in DEFECTS if d != "nonce-mismatch"]:
        with pytest.raises((jwt.InvalidTokenError, jwt.PyJWKClientError)):
            verify(payload(defect))


@pytest.mark.parametrize("body, field", [
    ({"user": "alice", "defect": "sloppy"}, "defect"),
    ({"user": "alice", "kind": "access_token"}, "kind"),
    ({"client_id": CLIENT}, "user"),
    ({"user": "nobody"}, "user"),
    ({"user": "alice", "client_id": "com.nowhere"}, "client_id"),
    ({"user": "alice", "claims": ["sub"]}, "claims"),
    ({"user": "alice", "kind": "notification", "defect": "nonce-mismatch"}, "defect"),
    ({"user": "alice", "kind": "notification", "type": "birthday"}, "type"),
    ({"user": "alice", "type": "account-delete"}, "type"),
    ({"user": "alice", "surprise": 1}, "surprise"),
])
def test_bad_requests_name_the_field(mock, body, field):
    answer = requests.post(f"{mock.url}/__mock/tokens", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field


def test_claims_override_and_remove(mock):
    token = forge(mock, claims={"email": "mallory@example.com", "nonce_supported": None})["id_token"]
    claims = CarefulVerifier(mock.url).verify(token, nonce="nonce-1")
    assert claims["email"] == "mallory@example.com" and "nonce_supported" not in claims


def test_headless_authorize_delivers_a_defective_id_token_and_its_code_exchanges_for_one(mock):
    answer = requests.post(f"{mock.url}/__mock/authorize", json={
        "client_id": "com.example.web", "redirect_uri": "https://app.example.com/callback", "response_type": "code id_token",
        "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n", "user": "alice", "defect": "wrong-audience"})
    assert answer.status_code == 200, answer.text
    form = answer.json()["form"]
    assert jwt.decode(form["id_token"], options={"verify_signature": False})["aud"] == "com.attacker.app"
    from conftest import client_secret
    exchanged = requests.post(f"{mock.url}/auth/token", data={
        "client_id": "com.example.web", "client_secret": client_secret(), "grant_type": "authorization_code", "code": form["code"],
        "redirect_uri": "https://app.example.com/callback"})
    assert exchanged.status_code == 200, exchanged.text
    assert jwt.decode(exchanged.json()["id_token"], options={"verify_signature": False})["aud"] == "com.attacker.app"
    refused = requests.post(f"{mock.url}/__mock/authorize", json={
        "client_id": "com.example.web", "redirect_uri": "https://app.example.com/callback", "response_type": "code",
        "response_mode": "query", "user": "alice", "defect": "wrong-audiences"})
    assert refused.status_code == 400 and refused.json()["field"] == "defect"


def test_native_sign_in_with_a_defect(mock):
    good = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "alice", "client_id": CLIENT}).json()
    CarefulVerifier(mock.url).verify(good["identityToken"])
    bad = requests.post(f"{mock.url}/__mock/sign-in", json={"user": "alice", "client_id": CLIENT, "defect": "alg-none"}).json()
    assert bad["identityToken"].endswith(".")
    with pytest.raises(jwt.InvalidTokenError):
        CarefulVerifier(mock.url).verify(bad["identityToken"])


def test_cli_token_prints_the_token_alone_and_refuses_an_unknown_defect(mock):
    result = run_cli("token", "--server", mock.url, "--user", "alice", "--client", CLIENT, "--defect", "wrong-audience")
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == "com.attacker.app"
    twin = run_cli("token", "--server", mock.url, "--user", "alice", "--client", CLIENT).stdout.strip()
    assert CarefulVerifier(mock.url).verify(twin)["aud"] == CLIENT
    notification = run_cli("token", "--server", mock.url, "--user", "alice", "--notification", "--type", "email-disabled", "--json")
    assert set(json.loads(notification.stdout)) == {"payload", "defect", "check"}
    refused = run_cli("token", "--server", mock.url, "--user", "alice", "--defect", "sloppy")
    assert refused.returncode == 2 and "--defect: unknown defect \"sloppy\"" in refused.stderr
    no_user = run_cli("token", "--server", mock.url)
    assert no_user.returncode == 2 and "--user is required" in no_user.stderr
    stray = run_cli("token", "--server", mock.url, "--user", "alice", "--type", "consent-revoked")
    assert stray.returncode == 2 and "--type needs --notification" in stray.stderr
