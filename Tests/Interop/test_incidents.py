"""Apple's own incidents, reproduced by the mock's presets and met by independent clients.

discovery-issuer-flip: in June 2025 Apple's discovery document named https://account.apple.com as
the issuer while id_tokens kept iss https://appleid.apple.com. A client that takes the issuer from
discovery and checks every id_token against it (openid-client, which next-auth uses; Authlib here,
doing the same two steps) refused every sign-in; a backend that pins Apple's documented issuer
passed."""
import requests
import pytest
from authlib.jose import JsonWebKey, jwt
from authlib.jose.errors import InvalidClaimError
from authlib.oidc.discovery import OpenIDProviderMetadata

APPLE_ISSUER = "https://appleid.apple.com"


def discover(mock):
    """What openid-client's Issuer.discover does: fetch the document (following redirects) and
    take its issuer. Returns the metadata and the redirects it followed."""
    answer = requests.get(f"{mock.url}/.well-known/openid-configuration")
    assert answer.status_code == 200 and answer.headers["Server"] == "Apple"
    discover.redirects = [(r.status_code, r.headers["Location"]) for r in answer.history]
    metadata = OpenIDProviderMetadata(answer.json())
    metadata.validate_issuer()
    metadata.validate_jwks_uri()
    return metadata


def id_token(mock):
    answer = requests.post(f"{mock.url}/__mock/id-token", json={"user": "alice", "client_id": "com.example.app"})
    assert answer.status_code == 200, answer.text
    return answer.json()["id_token"]


def verify(mock, token, issuer):
    """The id_token check both kinds of backend make, with the keys from the mock's /auth/keys
    (a backend configured for Apple fetches https://appleid.apple.com/auth/keys) and `issuer`."""
    keys = JsonWebKey.import_key_set(requests.get(f"{mock.url}/auth/keys").json())
    claims = jwt.decode(token, keys, claims_options={"iss": {"essential": True, "value": issuer},
                                                     "aud": {"essential": True, "value": "com.example.app"}})
    claims.validate()
    return claims


def test_discovery_issuer_flip_breaks_a_discovery_trusting_client_and_not_a_pinned_one(mock):
    assert discover(mock)["issuer"] == APPLE_ISSUER and discover.redirects == []
    installed = requests.post(f"{mock.url}/__mock/faults", json={"incident": "discovery-issuer-flip"})
    assert installed.status_code == 201, installed.text

    # As in June 2025: a redirect, then a document naming account.apple.com; its endpoints stay
    # on the mock (no request leaves loopback).
    metadata = discover(mock)
    assert discover.redirects == [(302, "/account.apple.com/.well-known/openid-configuration")]
    assert metadata["issuer"] == "https://account.apple.com"
    assert metadata["jwks_uri"] == f"{mock.url}/auth/keys"
    token = id_token(mock)
    # The discovery-trusting client: the 2025 failure, "unexpected iss value".
    with pytest.raises(InvalidClaimError) as refused:
        verify(mock, token, metadata["issuer"])
    assert "iss" in str(refused.value)
    # The backend that pins Apple's documented issuer passes through the incident.
    assert verify(mock, token, APPLE_ISSUER)["iss"] == APPLE_ISSUER

    # Removing the preset restores Apple's document: the discovery-trusting client works again.
    removed = requests.delete(f"{mock.url}/__mock/faults", params={"incident": "discovery-issuer-flip"})
    assert removed.json() == {"removed": 1}
    assert verify(mock, id_token(mock), discover(mock)["issuer"])["iss"] == APPLE_ISSUER
    assert discover.redirects == []


def test_jwks_without_signing_key_fails_a_verifier_until_the_preset_is_removed(mock):
    token = id_token(mock)
    assert requests.post(f"{mock.url}/__mock/faults", json={"incident": "jwks-without-signing-key"}).status_code == 201
    with pytest.raises(ValueError):
        verify(mock, token, APPLE_ISSUER)
    requests.delete(f"{mock.url}/__mock/faults", params={"incident": "jwks-without-signing-key"})
    assert verify(mock, token, APPLE_ISSUER)["sub"]
