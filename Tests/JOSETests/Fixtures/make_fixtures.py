#!/usr/bin/env python3
"""Makes the JOSE interop fixtures with an independent implementation (PyJWT + cryptography).

Run once by hand (`python3 make_fixtures.py` in this folder); the outputs are committed and the
Swift tests only read them. Re-running makes new keys, so every output changes together.
TEST-ONLY key material: never use these keys for anything real.
"""
import base64
import json
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

HERE = Path(__file__).resolve().parent


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def write(name: str, text: str) -> None:
    (HERE / name).write_text(text)


def main() -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    p256_key = ec.generate_private_key(ec.SECP256R1())

    pkcs8 = serialization.PrivateFormat.PKCS8
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    pem = serialization.Encoding.PEM
    none = serialization.NoEncryption()
    write("rsa_private_pkcs8.pem", rsa_key.private_bytes(pem, pkcs8, none).decode())
    write("rsa_private_pkcs1.pem",
          rsa_key.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL, none).decode())
    write("rsa_private_encrypted.pem", rsa_key.private_bytes(
        pem, pkcs8, serialization.BestAvailableEncryption(b"fixture-password")).decode())
    write("rsa_public.pem", rsa_key.public_key().public_bytes(pem, spki).decode())
    write("p256_private_pkcs8.p8", p256_key.private_bytes(pem, pkcs8, none).decode())
    write("p256_private_sec1.pem",
          p256_key.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL, none).decode())
    write("p256_public.pem", p256_key.public_key().public_bytes(pem, spki).decode())

    numbers = rsa_key.public_key().public_numbers()
    jwks = {"keys": [{
        "kty": "RSA", "kid": "FixtureK01", "use": "sig", "alg": "RS256",
        "n": b64url(int_bytes(numbers.n)), "e": b64url(int_bytes(numbers.e)),
    }]}
    write("jwks.json", json.dumps(jwks, indent=2) + "\n")

    now = int(time.time())
    id_claims = {
        "iss": "https://appleid.apple.com", "aud": "com.example.app", "exp": now + 86400,
        "iat": now, "sub": "000123.fixture.0456", "email": "fixture@example.com",
    }
    # PyJWT would add "typ"; a header of exactly {"kid","alg"} (Apple's shape) is built by hand.
    rs_header = b64url(json.dumps({"kid": "FixtureK01", "alg": "RS256"}, separators=(",", ":")).encode())
    rs_payload = b64url(json.dumps(id_claims, separators=(",", ":")).encode())
    rs_input = f"{rs_header}.{rs_payload}".encode()
    rs_sig = rsa_key.sign(rs_input, padding.PKCS1v15(), hashes.SHA256())
    rs_token = f"{rs_header}.{rs_payload}.{b64url(rs_sig)}"
    # Cross-check with PyJWT that the hand-built token is a valid RS256 JWT.
    jwt.decode(rs_token, rsa_key.public_key(), algorithms=["RS256"], audience="com.example.app")
    write("rs256_token.txt", rs_token + "\n")

    secret_claims = {
        "iss": "TEAMID1234", "iat": now, "exp": now + 15777000,
        "aud": "https://appleid.apple.com", "sub": "com.example.app.service",
    }
    es_token = jwt.encode(secret_claims, p256_key, algorithm="ES256",
                          headers={"alg": "ES256", "kid": "MOCKKEY001", "typ": None})  # None drops PyJWT's typ
    write("es256_token.txt", es_token + "\n")

    # Same header and claims, but the signature left in DER (cryptography's native output).
    es_header, es_payload, _ = es_token.split(".")
    der_sig = p256_key.sign(f"{es_header}.{es_payload}".encode(), ec.ECDSA(hashes.SHA256()))
    write("es256_der_token.txt", f"{es_header}.{es_payload}.{b64url(der_sig)}\n")

    # A P-384 key, which every P-256 loader must refuse.
    p384_key = ec.generate_private_key(ec.SECP384R1())
    write("p384_private_pkcs8.pem", p384_key.private_bytes(pem, pkcs8, none).decode())
    write("p384_public.pem", p384_key.public_key().public_bytes(pem, spki).decode())


if __name__ == "__main__":
    main()
