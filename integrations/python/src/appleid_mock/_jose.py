"""The little JOSE the plugin needs, on the standard library alone: an ES256 `client_secret`
(ECDSA P-256, FIPS 186-4 with a fresh random k) signed with a `.p8` key, and RS256 verification
(RSASSA-PKCS1-v1_5 with SHA-256, RFC 8017 §8.2.2: the expected encoding rebuilt and compared
whole, never parsed) of what the mock signs. Test keys only: nothing here is constant-time."""
import base64
import hashlib
import hmac
import json
import secrets

# NIST P-256 (FIPS 186-4 D.1.2.3).
_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_A = _P - 3
_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
      0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
# DER of the DigestInfo for SHA-256 (RFC 8017 §9.2, note 1).
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


class KeyFormatError(ValueError):
    """A key the plugin cannot read."""


def b64url(data):
    """base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    """The bytes of unpadded base64url text."""
    if isinstance(text, str):
        text = text.encode("ascii")
    return base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4))


def _add(p, q):
    if p is None:
        return q
    if q is None:
        return p
    if p[0] == q[0]:
        if (p[1] + q[1]) % _P == 0:
            return None
        slope = (3 * p[0] * p[0] + _A) * pow(2 * p[1], _P - 2, _P) % _P
    else:
        slope = (q[1] - p[1]) * pow(q[0] - p[0], _P - 2, _P) % _P
    x = (slope * slope - p[0] - q[0]) % _P
    return x, (slope * (p[0] - x) - p[1]) % _P


def _multiply(k, point):
    result = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


def _der(data, offset):
    """(tag, content start, content end) of the DER element at `offset`."""
    tag, length = data[offset], data[offset + 1]
    offset += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[offset:offset + count], "big")
        offset += count
    return tag, offset, offset + length


def p256_private_scalar(pem):
    """The private scalar of a PKCS#8 P-256 key in PEM (an App Store Connect `.p8`)."""
    lines = [line.strip() for line in pem.strip().splitlines()]
    if not lines or lines[0] != "-----BEGIN PRIVATE KEY-----" or lines[-1] != "-----END PRIVATE KEY-----":
        raise KeyFormatError("expected a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----), as an App Store Connect .p8 is")
    der = base64.b64decode("".join(lines[1:-1]))
    try:
        # PrivateKeyInfo ::= SEQUENCE { version, AlgorithmIdentifier, OCTET STRING { ECPrivateKey } }
        _, start, _ = _der(der, 0)
        _, _, end = _der(der, start)                      # version
        _, algorithm_start, algorithm_end = _der(der, end)
        tag, inner_start, _ = _der(der, algorithm_end)
        if tag != 0x04 or bytes.fromhex("2a8648ce3d030107") not in der[algorithm_start:algorithm_end]:
            raise KeyFormatError("not a P-256 key (the curve is not prime256v1)")
        # ECPrivateKey ::= SEQUENCE { version, privateKey OCTET STRING, … }
        _, start, _ = _der(der, inner_start)
        _, _, end = _der(der, start)
        tag, key_start, key_end = _der(der, end)
    except IndexError:
        raise KeyFormatError("the PEM's DER is cut short") from None
    if tag != 0x04 or key_end - key_start != 32:
        raise KeyFormatError("no 32-byte private key in the ECPrivateKey")
    scalar = int.from_bytes(der[key_start:key_end], "big")
    if not 0 < scalar < _N:
        raise KeyFormatError("the private key is out of range")
    return scalar


def es256_jwt(header, claims, scalar):
    """A compact JWS, ES256 (RFC 7518 §3.4: r and s, 32 bytes each), over the JSON of `header`
    (in the order given) and `claims`."""
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "."
                     + b64url(json.dumps(claims, separators=(",", ":")).encode()))
    z = int.from_bytes(hashlib.sha256(signing_input.encode()).digest(), "big")
    while True:
        k = secrets.randbelow(_N - 1) + 1
        r = _multiply(k, _G)[0] % _N
        s = pow(k, _N - 2, _N) * (z + r * scalar) % _N
        if r and s:
            return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def rs256_valid(token, jwk):
    """Whether `token`'s RS256 signature verifies under the RSA `jwk` (n, e)."""
    try:
        head, body, signature = token.split(".")
        n = int.from_bytes(b64url_decode(jwk["n"]), "big")
        e = int.from_bytes(b64url_decode(jwk["e"]), "big")
        signature = b64url_decode(signature)
    except (ValueError, KeyError, TypeError):
        return False
    size = (n.bit_length() + 7) // 8
    if len(signature) != size or int.from_bytes(signature, "big") >= n:
        return False
    digest = _SHA256_DIGEST_INFO + hashlib.sha256(f"{head}.{body}".encode("ascii")).digest()
    expected = b"\x00\x01" + b"\xff" * (size - 3 - len(digest)) + b"\x00" + digest
    return hmac.compare_digest(pow(int.from_bytes(signature, "big"), e, n).to_bytes(size, "big"), expected)


def unverified(token):
    """(header, claims) of a compact JWS, not verified."""
    head, body, _ = token.split(".")
    return json.loads(b64url_decode(head)), json.loads(b64url_decode(body))
