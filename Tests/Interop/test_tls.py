"""HTTPS stand-in for appleid.apple.com: `tls generate`, `serve --tls-cert/--tls-key`, clients
that trust only the test CA (curl, Python's ssl, requests, PyJWT), and a backend that changes
nothing but its CA bundle, in a network namespace where appleid.apple.com is the mock."""
import datetime
import http.client
import json
import os
import pathlib
import shutil
import ssl
import subprocess
import sys

import jwt
import pytest
import requests

from conftest import BINARY, ROOT, MockProcess, run_cli


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    made = run_cli("tls", "generate", "--out", str(directory), "--name", "mock")
    assert made.returncode == 0, made.stderr
    assert sorted(path.name for path in directory.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]
    assert oct(os.stat(directory / "key.pem").st_mode & 0o777) == "0o600"
    return directory


@pytest.fixture
def https_mock(tls_files):
    mock = MockProcess("--tls-cert", str(tls_files / "cert.pem"), "--tls-key", str(tls_files / "key.pem"))
    assert mock.url.startswith("https://127.0.0.1:")
    yield mock
    mock.stop()


def port(mock):
    return int(mock.url.rsplit(":", 1)[1])


def test_curl_reaches_appleid_apple_com_with_the_ca_and_fails_without_it(https_mock, tls_files):
    url = f"https://appleid.apple.com:{port(https_mock)}/auth/keys"
    resolve = f"appleid.apple.com:{port(https_mock)}:127.0.0.1"
    trusted = subprocess.run(["curl", "-sS", "--resolve", resolve, "--cacert", str(tls_files / "ca.pem"), url],
                             capture_output=True, text=True, timeout=30)
    assert trusted.returncode == 0, trusted.stderr
    assert len(json.loads(trusted.stdout)["keys"]) == 3
    untrusted = subprocess.run(["curl", "-sS", "--resolve", resolve, url], capture_output=True, text=True, timeout=30)
    assert untrusted.returncode == 60, untrusted.stderr  # CURLE_PEER_FAILED_VERIFICATION
    # Apple's script host is in the certificate too; a name it does not hold is refused.
    for host, status in [("appleid.cdn-apple.com", 0), ("appleid.cdn-apple.net", 60)]:
        script = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--resolve", f"{host}:{port(https_mock)}:127.0.0.1",
                                 "--cacert", str(tls_files / "ca.pem"),
                                 f"https://{host}:{port(https_mock)}/appleauth/static/jsapi/appleid/1/en_US/appleid.auth.js"],
                                capture_output=True, text=True, timeout=30)
        assert (script.returncode, script.stdout) == (status, "200" if status == 0 else "000"), (host, script.returncode, script.stdout, script.stderr)
    # Plain HTTP to the TLS port: a plain 400 saying so (as nginx does), never the keys.
    plain = subprocess.run(["curl", "-sS", "-w", "%{http_code}", f"http://127.0.0.1:{port(https_mock)}/auth/keys"],
                           capture_output=True, text=True, timeout=30)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == "This port speaks HTTPS; use https://\n400", plain.stdout


def test_tls_1_3_and_1_2_keep_alive_and_tokens_carry_apples_issuer(https_mock, tls_files):
    for maximum, expected in [(ssl.TLSVersion.TLSv1_3, "TLSv1.3"), (ssl.TLSVersion.TLSv1_2, "TLSv1.2")]:
        context = ssl.create_default_context(cafile=str(tls_files / "ca.pem"))
        context.maximum_version = maximum
        connection = http.client.HTTPSConnection("localhost", port(https_mock), context=context, timeout=10)
        connection.request("GET", "/auth/keys")
        first = connection.getresponse()
        assert first.status == 200 and json.loads(first.read())["keys"]
        tls_socket = connection.sock
        assert tls_socket.version() == expected
        connection.request("GET", "/.well-known/openid-configuration")
        second = connection.getresponse()
        discovery = json.loads(second.read())
        assert connection.sock is tls_socket, "the second request rode the same TLS connection"
        assert discovery["issuer"] == "https://appleid.apple.com"
        assert discovery["jwks_uri"] == f"{https_mock.url}/auth/keys"
        connection.close()
    minted = requests.post(f"{https_mock.url}/__mock/id-token", json={"user": "alice", "client_id": "com.example.app"},
                           verify=str(tls_files / "ca.pem"))
    assert minted.status_code == 200, minted.text
    token = minted.json()["id_token"]
    key = jwt.PyJWKClient(f"{https_mock.url}/auth/keys", ssl_context=ssl.create_default_context(cafile=str(tls_files / "ca.pem")))
    claims = jwt.decode(token, key.get_signing_key_from_jwt(token).key, algorithms=["RS256"], audience="com.example.app",
                        issuer="https://appleid.apple.com")
    assert claims["email"] == "alice@example.com"
    health = run_cli("health", "--server", https_mock.url, "--ca", str(tls_files / "ca.pem"))
    assert health.returncode == 0, health.stderr
    untrusted = run_cli("health", "--server", https_mock.url)
    assert untrusted.returncode == 1 and "certificate verify failed" in untrusted.stderr, untrusted.stderr


def expired_pair(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=10))
                   .not_valid_after(now - datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    (directory / "expired.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (directory / "expired-key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                                  serialization.NoEncryption()))


def test_serve_refuses_bad_tls_files_with_exit_2(tls_files, tmp_path):
    expired_pair(tmp_path)
    other = tmp_path / "other"
    assert run_cli("tls", "generate", "--out", str(other)).returncode == 0
    cert, key = str(tls_files / "cert.pem"), str(tls_files / "key.pem")
    cases = [
        (["--tls-cert", str(tmp_path / "expired.pem"), "--tls-key", str(tmp_path / "expired-key.pem")], "the certificate has expired"),
        (["--tls-cert", cert, "--tls-key", str(other / "key.pem")], "does not match the certificate"),
        (["--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", key], "No such file or directory"),
        (["--tls-cert", key, "--tls-key", key], "not a PEM certificate chain"),
        (["--tls-cert", cert], "--tls-cert needs --tls-key"),
    ]
    for arguments, message in cases:
        result = subprocess.run([BINARY, "serve", "--port", "0", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2 and message in result.stderr, (arguments, result.returncode, result.stderr)
        assert result.stdout == ""


def test_tls_generate_refuses_to_overwrite_without_force(tls_files):
    again = run_cli("tls", "generate", "--out", str(tls_files))
    assert again.returncode == 1 and "exists; refusing to overwrite" in again.stderr
    bad = run_cli("tls", "generate", "--out", str(tls_files / "x"), "--name", "not a name")
    assert bad.returncode == 2 and "neither an IP address nor a DNS name" in bad.stderr


NAMESPACE_CLIENT = """
import json, ssl, sys, urllib.request
import jwt, requests
# Apple's real URLs and nothing else: the only setting is the CA bundle in the environment.
discovery = requests.get("https://appleid.apple.com/.well-known/openid-configuration", timeout=10).json()
assert discovery["issuer"] == "https://appleid.apple.com", discovery
keys = json.load(urllib.request.urlopen("https://appleid.apple.com/auth/keys", timeout=10))
token = requests.post("https://appleid.apple.com/__mock/id-token", json={"user": "alice", "client_id": "com.example.app"}, timeout=10).json()["id_token"]
signing = jwt.PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(token)
claims = jwt.decode(token, signing.key, algorithms=["RS256"], audience="com.example.app", issuer="https://appleid.apple.com")
print(json.dumps({"kids": sorted(k["kid"] for k in keys["keys"]), "sub": claims["sub"], "jwks_uri": discovery["jwks_uri"]}))
"""


def test_a_backend_with_apples_urls_talks_to_the_mock_in_a_network_namespace(tls_files, tmp_path):
    name = f"aimock{os.getpid()}"
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need root and iproute2 (`ip netns`)")
    added = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if added.returncode != 0:
        pytest.skip(f"network namespaces are not permitted here: {added.stderr.strip()}")
    hosts = pathlib.Path("/etc/netns") / name
    server = None
    try:
        hosts.mkdir(parents=True)
        # `ip netns exec` mounts this over /etc/hosts inside the namespace.
        (hosts / "hosts").write_text("127.0.0.1 localhost\n127.0.0.1 appleid.apple.com\n")
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
        server = subprocess.Popen(["ip", "netns", "exec", name, BINARY, "serve", "--port", "443", "--base-url", "https://appleid.apple.com",
                                   "--tls-cert", str(tls_files / "cert.pem"), "--tls-key", str(tls_files / "key.pem")],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert server.stdout.readline().strip() == "listening on https://127.0.0.1:443"
        client = tmp_path / "client.py"
        client.write_text(NAMESPACE_CLIENT)
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        trusting = dict(base, SSL_CERT_FILE=str(tls_files / "ca.pem"), REQUESTS_CA_BUNDLE=str(tls_files / "ca.pem"))
        ran = subprocess.run(["ip", "netns", "exec", name, sys.executable, str(client)], env=trusting, capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        answer = json.loads(ran.stdout)
        assert answer["jwks_uri"] == "https://appleid.apple.com/auth/keys"
        assert answer["kids"] == sorted(["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        # The twin: the same backend with only the system's CAs refuses the mock.
        system = dict(base, SSL_CERT_FILE="/etc/ssl/certs/ca-certificates.crt", REQUESTS_CA_BUNDLE="/etc/ssl/certs/ca-certificates.crt")
        refused = subprocess.run(["ip", "netns", "exec", name, sys.executable, str(client)], env=system, capture_output=True, text=True, timeout=60)
        assert refused.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr, refused.stderr
    finally:
        if server is not None:
            server.terminate()
            assert server.wait(timeout=20) == 0
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        shutil.rmtree(hosts, ignore_errors=True)


def half_closed_exchange(mock, ca, request):
    """Sends `request` over TLS, then ends the TCP stream without close_notify (as many clients
    do) and returns everything the server answered, decrypted."""
    import socket
    context = ssl.create_default_context(cafile=str(ca))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with socket.create_connection(("127.0.0.1", port(mock)), timeout=10) as raw:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                raw.sendall(outgoing.read())
                data = raw.recv(65536)
                assert data, "the server closed during the handshake"
                incoming.write(data)
        raw.sendall(outgoing.read())
        tls.write(request)
        raw.sendall(outgoing.read())
        raw.shutdown(socket.SHUT_WR)
        while data := raw.recv(65536):
            incoming.write(data)
    incoming.write_eof()
    answer = b""
    while True:
        try:
            chunk = tls.read(65536)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
        if not chunk:
            break
        answer += chunk
    return answer


def test_a_request_followed_by_a_close_without_close_notify_is_still_answered(https_mock, tls_files):
    # OpenSSL 3 reports such an end as an error unless told otherwise; the request sent before
    # it must not be lost.
    answer = half_closed_exchange(https_mock, tls_files / "ca.pem", b"GET /auth/keys HTTP/1.1\r\nHost: localhost\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:200]
    assert [key["kty"] for key in json.loads(body)["keys"]] == ["RSA"] * len(json.loads(body)["keys"])
    # The twin: a request cut off by the same close is not answered as if it were whole.
    partial = half_closed_exchange(https_mock, tls_files / "ca.pem", b"GET /auth/keys HTTP/1.1\r\nHost: local")
    assert b"200 OK" not in partial, partial[:200]
