"""authlib, a third-party OAuth/OIDC client configured only from the discovery document, acts
as the backend and completes Apple's web flow against the mock."""
import json
import secrets

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

from conftest import client_secret, hidden_fields

REDIRECT_URI = "http://localhost:3000/callback"


def sign_in_in_browser(url, user="alice"):
    """What the user's browser does: open the consent page, press Continue, and return the
    fields Apple's form_post page would post to the callback."""
    browser = requests.Session()
    consent = browser.get(url)
    assert consent.status_code == 200, consent.text
    form = hidden_fields(consent.text)
    form.update({"mock_user": user, "mock_action": "continue"})
    delivered = browser.post(url.split("?")[0], data=form)
    assert delivered.status_code == 200
    assert f'action="{REDIRECT_URI}"' in delivered.text
    return hidden_fields(delivered.text)


def backend(discovery):
    return OAuth2Session(client_id="com.example.web", client_secret=client_secret(), scope="openid name email",
                         redirect_uri=REDIRECT_URI, token_endpoint_auth_method="client_secret_post",
                         # Apple authenticates clients only by form fields (discovery: client_secret_post).
                         revocation_endpoint_auth_method=discovery["token_endpoint_auth_methods_supported"][0])


def validated_claims(discovery, id_token, nonce, access_token=None):
    keys = JsonWebKey.import_key_set(requests.get(discovery["jwks_uri"]).json())
    claims = jwt.decode(id_token, keys, claims_cls=CodeIDToken, claims_options={
        "iss": {"essential": True, "value": discovery["issuer"]},
        "aud": {"essential": True, "value": "com.example.web"},
    }, claims_params={"nonce": nonce, "access_token": access_token})
    claims.validate()
    return claims


def test_authlib_completes_web_flow_with_nonce_state_exchange_refresh_and_revoke(mock):
    discovery = requests.get(f"{mock.url}/.well-known/openid-configuration").json()
    session = backend(discovery)
    nonce = secrets.token_urlsafe(16)
    url, state = session.create_authorization_url(discovery["authorization_endpoint"], nonce=nonce, response_mode="form_post")

    posted = sign_in_in_browser(url)
    assert posted["state"] == state
    assert json.loads(posted["user"]) == {"name": {"firstName": "Alice", "lastName": "Appleseed"}, "email": "alice@example.com"}

    token = session.fetch_token(discovery["token_endpoint"], code=posted["code"], grant_type="authorization_code")
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    claims = validated_claims(discovery, token["id_token"], nonce, token["access_token"])  # checks at_hash and nonce too
    assert claims["email"] == "alice@example.com"
    assert claims["email_verified"] is True

    refreshed = session.refresh_token(discovery["token_endpoint"], refresh_token=token["refresh_token"])
    assert refreshed["access_token"] != token["access_token"]
    refreshed_claims = jwt.decode(refreshed["id_token"], JsonWebKey.import_key_set(requests.get(discovery["jwks_uri"]).json()))
    assert refreshed_claims["sub"] == claims["sub"] and "auth_time" not in refreshed_claims

    revoked = session.revoke_token(discovery["revocation_endpoint"], token=token["refresh_token"], token_type_hint="refresh_token")
    assert revoked.status_code == 200 and revoked.content == b""
    with pytest.raises(Exception) as failure:
        session.refresh_token(discovery["token_endpoint"], refresh_token=token["refresh_token"])
    assert "invalid_grant" in str(failure.value)

    # Revocation removed the consent: the next sign-in is a first one and carries `user` again.
    url, _ = session.create_authorization_url(discovery["authorization_endpoint"], nonce=nonce, response_mode="form_post")
    assert "user" in sign_in_in_browser(url)


def test_authlib_rejects_id_token_with_wrong_nonce_and_code_reuse(mock):
    discovery = requests.get(f"{mock.url}/.well-known/openid-configuration").json()
    session = backend(discovery)
    url, _ = session.create_authorization_url(discovery["authorization_endpoint"], nonce="right-nonce", response_mode="form_post")
    posted = sign_in_in_browser(url)
    token = session.fetch_token(discovery["token_endpoint"], code=posted["code"], grant_type="authorization_code")
    with pytest.raises(Exception, match="nonce"):
        validated_claims(discovery, token["id_token"], "wrong-nonce", token["access_token"])
    with pytest.raises(Exception) as failure:
        session.fetch_token(discovery["token_endpoint"], code=posted["code"], grant_type="authorization_code")
    assert "The code has already been used." in str(failure.value)
