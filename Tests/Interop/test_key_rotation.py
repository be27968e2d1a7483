"""PyJWT's PyJWKClient, an independent JWKS consumer, follows keys rotated at runtime."""
import inspect

import jwt
import pytest
import requests

INITIAL_KID = "W2ek7HdPaL"


def jwks_client(mock):
    """A PyJWKClient on the mock's /auth/keys. Newer PyJWT waits `cooldown_duration` seconds
    (30 by default) before refetching for an unknown kid; it is turned off so nothing sleeps."""
    cooldown = {"cooldown_duration": 0} if "cooldown_duration" in inspect.signature(jwt.PyJWKClient).parameters else {}
    return jwt.PyJWKClient(f"{mock.url}/auth/keys", **cooldown)


def mint(mock, user="alice"):
    response = requests.post(f"{mock.url}/__mock/id-token", json={"user": user, "client_id": "com.example.app"})
    assert response.status_code == 200, response.text
    return response.json()["id_token"]


def verify(client, token):
    key = client.get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=["RS256"], audience="com.example.app", issuer="https://appleid.apple.com")


def cached_kids(client):
    return sorted(key.key_id for key in client.jwk_set_cache.get().keys)


def test_pyjwk_client_refetches_for_a_newly_activated_key_and_forgets_a_retired_one(mock):
    old = mint(mock)
    assert jwt.get_unverified_header(old)["kid"] == INITIAL_KID
    client = jwks_client(mock)
    assert verify(client, old)["aud"] == "com.example.app"
    # The JWKS cache is warm with the three initial keys.
    assert cached_kids(client) == sorted([INITIAL_KID, "Ymq4vB9xTz", "r8TcNf3QsJ"])

    rotated = requests.post(f"{mock.url}/__mock/keys/rotate", json={})
    assert rotated.status_code == 200, rotated.text
    step = rotated.json()
    assert step["previous"] == INITIAL_KID and step["state"] == "active"
    new = mint(mock)
    assert jwt.get_unverified_header(new) == {"kid": step["kid"], "alg": "RS256"}

    # The new kid is not in the warm cache: the client refetches and verifies.
    assert step["kid"] not in cached_kids(client)
    assert verify(client, new)["sub"] == verify(client, old)["sub"]
    assert step["kid"] in cached_kids(client)

    # The previous key is still published: its token verifies, also for a fresh client.
    assert verify(jwks_client(mock), old)["aud"] == "com.example.app"

    retired = requests.delete(f"{mock.url}/__mock/keys/{INITIAL_KID}")
    assert retired.status_code == 200, retired.text
    assert retired.json() == {"kid": INITIAL_KID, "state": "retired"}
    fresh = jwks_client(mock)
    with pytest.raises(jwt.PyJWKClientError, match="Unable to find a signing key that matches"):
        fresh.get_signing_key_from_jwt(old)
    # Twin: what the active key signs still verifies with the same fresh client.
    assert verify(fresh, new)["aud"] == "com.example.app"


def test_pyjwk_client_sees_a_published_key_before_it_signs(mock):
    published = requests.post(f"{mock.url}/__mock/keys", json={"kid": "NextKey001"})
    assert published.status_code == 201, published.text
    assert published.json() == {"kid": "NextKey001", "state": "published"}
    client = jwks_client(mock)
    assert "NextKey001" in [key.key_id for key in client.get_signing_keys()]
    # Still signed by the initial key until activated.
    assert jwt.get_unverified_header(mint(mock))["kid"] == INITIAL_KID
    activated = requests.post(f"{mock.url}/__mock/keys/NextKey001/activate", json={})
    assert activated.status_code == 200, activated.text
    token = mint(mock)
    assert jwt.get_unverified_header(token)["kid"] == "NextKey001"
    assert verify(client, token)["aud"] == "com.example.app"


def test_retiring_the_signing_key_is_refused_and_it_keeps_verifying(mock):
    refused = requests.delete(f"{mock.url}/__mock/keys/{INITIAL_KID}")
    assert refused.status_code == 409
    assert refused.json() == {
        "error": "the key signs new tokens: activate another key before retiring it", "field": "kid", "kid": INITIAL_KID,
    }
    assert verify(jwks_client(mock), mint(mock))["aud"] == "com.example.app"
