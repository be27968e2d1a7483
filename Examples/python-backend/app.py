"""A small backend that signs users in with Apple — written against Apple's real URLs.

Nothing here knows about AppleIDMock: point `appleid.apple.com` at the mock (a hosts entry, a
compose network alias) and trust its test CA (SSL_CERT_FILE / REQUESTS_CA_BUNDLE), and this
backend signs users in against the mock exactly as it would against Apple.

Routes
  GET  /                    a "Sign in with Apple" link (web flow, response_mode=form_post)
  POST /callback            Apple's form_post: state checked, code redeemed, id_token verified,
                            name and email kept from the first login's `user` JSON
  POST /native              an iOS app's identityToken + authorizationCode
  POST /refresh/{sub}       the stored refresh token redeemed again (is the user still signed in?)
  POST /apple/notifications Apple's server-to-server notifications, verified and acted on
  GET  /users/{sub}         what this backend knows about a user
"""
import html
import json
import os
import secrets
import threading
import time
import urllib.parse

import jwt
import requests
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

APPLE = "https://appleid.apple.com"
# Where the user's browser is sent to sign in. Apple's, unless the browser reaches Apple (or the
# mock) under another name than this backend does: docker-compose.yml sets the mock's published
# https://localhost:8443/auth/authorize, since appleid.apple.com is the mock only inside its network.
AUTHORIZE_URL = os.environ.get("APPLE_AUTHORIZE_URL", f"{APPLE}/auth/authorize")
TOKEN_URL = f"{APPLE}/auth/token"
KEYS_URL = f"{APPLE}/auth/keys"

CLIENT_ID = os.environ.get("APPLE_CLIENT_ID", "com.example.web")   # the Services ID (web)
APP_ID = os.environ.get("APPLE_APP_ID", "com.example.app")          # the App ID (iOS), the group's primary
TEAM_ID = os.environ.get("APPLE_TEAM_ID", "MOCKTEAM01")
KEY_ID = os.environ.get("APPLE_KEY_ID", "MOCKKEY001")
PRIVATE_KEY = open(os.environ.get("APPLE_PRIVATE_KEY_FILE", "AuthKey_MOCKKEY001.p8")).read()
REDIRECT_URI = os.environ.get("APPLE_REDIRECT_URI", "http://localhost:3000/callback")

# PyJWKClient caches Apple's key set for five minutes and refetches it when a token names a kid
# the set lacks (Apple rotates keys). Not `cache_keys=True`: that keeps every key it once
# resolved, in an LRU cache, forever — a key Apple has retired would still verify
# (`appleid-mock audit` found it: its retired-key check). The cooldown between refetches is off
# where this PyJWT version has one.
try:
    keys = jwt.PyJWKClient(KEYS_URL, cache_keys=False, cache_jwk_set=True, lifespan=300, cooldown_duration=0)
except TypeError:
    keys = jwt.PyJWKClient(KEYS_URL, cache_keys=False, cache_jwk_set=True, lifespan=300)

lock = threading.Lock()
pending = {}   # state -> nonce, for web logins in progress
users = {}     # sub -> {"email", "name", "refresh_token", "client_id", "status", "relay_forwarding", "logins"}


def client_secret(client_id):
    """The ES256 client_secret Apple requires: iss team, sub client, aud Apple, at most 6 months."""
    now = int(time.time())
    return jwt.encode({"iss": TEAM_ID, "iat": now, "exp": now + 300, "aud": APPLE, "sub": client_id},
                      PRIVATE_KEY, algorithm="ES256", headers={"kid": KEY_ID})


# An identity token is used within minutes of Apple issuing it: an older one is a replay,
# whatever its exp says (Apple's live for a day). A notification may arrive after retries.
MAX_TOKEN_AGE = 600


def verify(token, audience, nonce=None, max_age=MAX_TOKEN_AGE, require=("sub",)):
    """An Apple-signed JWT: the kid looked up at /auth/keys, RS256 only, iss, aud, exp checked,
    iat neither in the future nor older than `max_age`, the nonce compared when one was sent."""
    key = keys.get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=APPLE,
                        options={"require": ["iss", "aud", "exp", "iat", *require]})
    now = time.time()
    if claims["iat"] > now + 60:
        raise jwt.ImmatureSignatureError("iat is in the future")
    if max_age is not None and now - claims["iat"] > max_age:
        raise jwt.InvalidIssuedAtError("issued too long ago")
    if nonce is not None and claims.get("nonce") != nonce:
        raise jwt.InvalidTokenError("nonce mismatch")
    return claims


def redeem(client_id, **grant):
    """Apple's answer at /auth/token; an answer that is not Apple's JSON (a 503 page) is an error too."""
    try:
        answer = requests.post(TOKEN_URL, data={"client_id": client_id, "client_secret": client_secret(client_id), **grant}, timeout=10)
        return answer.status_code, answer.json()
    except (requests.RequestException, ValueError) as error:
        return 502, {"error": f"Apple unavailable: {error}"}


def remember(claims, client_id, refresh_token, first_user=None):
    """Keeps a user. Apple sends name (and, on the web, email) only on the first login."""
    with lock:
        user = users.get(claims["sub"])
        first = user is None or user["status"] != "active"
        if first:
            user = {"email": None, "name": None, "relay_forwarding": True, "logins": 0}
            users[claims["sub"]] = user
        if first_user:
            name = first_user.get("name") or {}
            user["name"] = " ".join(part for part in (name.get("firstName"), name.get("lastName")) if part) or user["name"]
            user["email"] = first_user.get("email") or user["email"]
        user["email"] = claims.get("email") or user["email"]
        user.update(refresh_token=refresh_token, client_id=client_id, status="active")
        user["logins"] += 1
        return {"sub": claims["sub"], "email": user["email"], "name": user["name"], "first_login": first}


async def home(request):
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    with lock:
        pending[state] = nonce
    query = urllib.parse.urlencode({"client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "response_type": "code",
                                    "response_mode": "form_post", "scope": "name email", "state": state, "nonce": nonce})
    if request.query_params.get("redirect") == "0":
        return JSONResponse({"authorize_url": f"{AUTHORIZE_URL}?{query}"})
    return HTMLResponse(f'<a href="{html.escape(f"{AUTHORIZE_URL}?{query}")}">Sign in with Apple</a>')


async def callback(request):
    form = await request.form()
    if "error" in form:
        return JSONResponse({"error": form["error"]}, status_code=400)
    with lock:
        nonce = pending.pop(form.get("state", ""), None)
    if nonce is None:
        return JSONResponse({"error": "unknown state"}, status_code=400)
    status, tokens = redeem(CLIENT_ID, grant_type="authorization_code", code=form["code"], redirect_uri=REDIRECT_URI)
    if status != 200:
        return JSONResponse({"error": tokens.get("error")}, status_code=400)
    try:
        claims = verify(tokens["id_token"], CLIENT_ID, nonce)
    except (jwt.InvalidTokenError, jwt.PyJWKClientError) as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    first_user = json.loads(form["user"]) if "user" in form else None
    return JSONResponse(remember(claims, CLIENT_ID, tokens.get("refresh_token"), first_user))


async def native(request):
    body = await request.json()
    try:
        identity = verify(body["identityToken"], APP_ID)
    except (jwt.InvalidTokenError, jwt.PyJWKClientError) as error:
        return JSONResponse({"error": str(error)}, status_code=401)
    status, tokens = redeem(APP_ID, grant_type="authorization_code", code=body["authorizationCode"])
    if status != 200:
        return JSONResponse({"error": tokens.get("error")}, status_code=400)
    full_name = body.get("fullName") or {}
    first_user = {"name": {"firstName": full_name.get("givenName"), "lastName": full_name.get("familyName")}} if full_name else None
    return JSONResponse(remember(identity, APP_ID, tokens.get("refresh_token"), first_user))


async def refresh(request):
    sub = request.path_params["sub"]
    with lock:
        user = users.get(sub)
    if user is None or user["status"] != "active" or not user.get("refresh_token"):
        return JSONResponse({"signed_in": False, "reason": user["status"] if user else "unknown user"})
    status, tokens = redeem(user["client_id"], grant_type="refresh_token", refresh_token=user["refresh_token"])
    if status != 200:
        return JSONResponse({"signed_in": False, "reason": tokens.get("error")})
    verify(tokens["id_token"], user["client_id"])
    return JSONResponse({"signed_in": True})


async def notifications(request):
    """Apple's server-to-server notification: {"payload": JWT}, aud the primary App ID."""
    try:
        claims = verify((await request.json())["payload"], APP_ID, max_age=3600, require=("jti",))
        event = claims["events"]
        event = json.loads(event) if isinstance(event, str) else event
        if not event.get("sub"):
            raise jwt.MissingRequiredClaimError("events.sub")
    except (jwt.InvalidTokenError, jwt.PyJWKClientError, KeyError, ValueError, AttributeError) as error:
        return JSONResponse({"error": str(error)}, status_code=400)
    with lock:
        user = users.get(event["sub"])
        if user is not None:
            if event["type"] == "consent-revoked":
                user.update(status="revoked", refresh_token=None)
            elif event["type"] in ("account-delete", "account-deleted"):
                user.update(status="deleted", refresh_token=None, email=None, name=None)
            elif event["type"] in ("email-disabled", "email-enabled"):
                user["relay_forwarding"] = event["type"] == "email-enabled"
            user.setdefault("events", []).append(event["type"])
    return JSONResponse({"ok": True})


async def show_user(request):
    with lock:
        user = users.get(request.path_params["sub"])
        answer = None if user is None else {k: v for k, v in user.items() if k != "refresh_token"}
    return JSONResponse(answer, status_code=200 if answer else 404)


app = Starlette(routes=[
    Route("/", home),
    Route("/callback", callback, methods=["POST"]),
    Route("/native", native, methods=["POST"]),
    Route("/refresh/{sub}", refresh, methods=["POST"]),
    Route("/apple/notifications", notifications, methods=["POST"]),
    Route("/users/{sub}", show_user),
])
