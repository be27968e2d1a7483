"""PyJWT, an independent JOSE implementation, verifies what the mock signs."""
import json
import pathlib

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization

from conftest import ROOT, run_cli


def test_pyjwt_verifies_id_token_with_keys_fetched_from_auth_keys(mock):
    minted = requests.post(f"{mock.url}/__mock/id-token",
                           json={"user": "alice", "client_id": "com.example.app", "nonce": "n-1"}).json()
    token = minted["id_token"]
    signing_key = jwt.PyJWKClient(f"{mock.url}/auth/keys").get_signing_key_from_jwt(token)
    claims = jwt.decode(token, signing_key.key, algorithms=["RS256"], audience="com.example.app",
                        issuer="https://appleid.apple.com", options={"require": ["iss", "aud", "exp", "iat", "sub"]})
    assert claims["sub"] == minted["sub"]
    assert claims["email"] == "alice@example.com"
    assert claims["nonce"] == "n-1"
    assert jwt.get_unverified_header(token) == {"kid": signing_key.key_id, "alg": "RS256"}


def test_pyjwt_rejects_tampered_id_token(mock):
    token = requests.post(f"{mock.url}/__mock/id-token", json={"user": "alice"}).json()["id_token"]
    signing_key = jwt.PyJWKClient(f"{mock.url}/auth/keys").get_signing_key_from_jwt(token)
    header, payload, signature = token.split(".")
    forged_claims = jwt.utils.base64url_decode(payload).replace(b"alice@example.com", b"mallory@example.com")
    forged = ".".join([header, jwt.utils.base64url_encode(forged_claims).decode(), signature])
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(forged, signing_key.key, algorithms=["RS256"], audience="com.example.app")


def test_pyjwt_rejects_id_token_for_another_audience(mock):
    token = requests.post(f"{mock.url}/__mock/id-token", json={"user": "bob", "client_id": "com.example.web"}).json()["id_token"]
    signing_key = jwt.PyJWKClient(f"{mock.url}/auth/keys").get_signing_key_from_jwt(token)
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, signing_key.key, algorithms=["RS256"], audience="com.example.app")


def developer_public_key():
    pem = (ROOT / "Keys" / "AuthKey_MOCKKEY001.p8").read_bytes()
    return serialization.load_pem_private_key(pem, password=None).public_key()


def test_pyjwt_verifies_client_secret_with_aud_iss_sub_checks():
    result = run_cli("client-secret")
    assert result.returncode == 0, result.stderr
    secret = result.stdout.strip()
    claims = jwt.decode(secret, developer_public_key(), algorithms=["ES256"], audience="https://appleid.apple.com",
                        issuer="MOCKTEAM01", options={"require": ["iss", "aud", "exp", "iat", "sub"]})
    assert claims["sub"] == "com.example.web"
    assert claims["exp"] - claims["iat"] == 3600
    assert jwt.get_unverified_header(secret) == {"alg": "ES256", "kid": "MOCKKEY001"}


def test_pyjwt_rejects_client_secret_with_wrong_issuer_or_audience_or_key():
    secret = run_cli("client-secret", "--client", "com.example.app").stdout.strip()
    assert jwt.decode(secret, developer_public_key(), algorithms=["ES256"], audience="https://appleid.apple.com")["sub"] == "com.example.app"
    with pytest.raises(jwt.InvalidIssuerError):
        jwt.decode(secret, developer_public_key(), algorithms=["ES256"], audience="https://appleid.apple.com", issuer="OTHERTEAM1")
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(secret, developer_public_key(), algorithms=["ES256"], audience="https://example.com")
    from cryptography.hazmat.primitives.asymmetric import ec
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(secret, ec.generate_private_key(ec.SECP256R1()).public_key(), algorithms=["ES256"], audience="https://appleid.apple.com")


def test_discovery_document_matches_apple_key_for_key(mock):
    document = requests.get(f"{mock.url}/.well-known/openid-configuration").json()
    assert list(document) == [
        "issuer", "authorization_endpoint", "token_endpoint", "revocation_endpoint", "jwks_uri",
        "response_types_supported", "response_modes_supported", "subject_types_supported",
        "id_token_signing_alg_values_supported", "scopes_supported", "token_endpoint_auth_methods_supported",
        "claims_supported",
    ]
    assert document["issuer"] == "https://appleid.apple.com"
    assert document["jwks_uri"] == f"{mock.url}/auth/keys"
