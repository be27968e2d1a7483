// A backend's own test, as a team adopting the kit writes it: the backend (a node:http handler
// that redeems Apple's code and verifies the id_token with node:crypto) is pointed at the mock,
// and the kit plays the user and Apple. Nothing here is the kit but `start`.
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { start } from 'appleid-mock';

// ---- the backend under test (in an app, its own module) ----

const ISSUER = 'https://appleid.apple.com';

// POST /auth/apple with form fields code (and, the first time, user): redeems the code at
// `apple`/auth/token (with the redirect_uri the web flow used, as Apple requires), verifies the id_token against `apple`/auth/keys, answers {sub, email}.
function appleSignInBackend({ apple, clientID, redirectURI, clientSecret }) {
  const keys = new Map();
  async function key(kid) {
    if (!keys.has(kid)) for (const jwk of (await (await fetch(`${apple}/auth/keys`)).json()).keys) keys.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }));
    return keys.get(kid);
  }
  async function verified(idToken) {
    const [header, payload, signature] = idToken.split('.');
    const { alg, kid } = JSON.parse(Buffer.from(header, 'base64url'));
    const publicKey = alg === 'RS256' ? await key(kid) : undefined;
    if (!publicKey || !verify('sha256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'))) throw new Error('bad signature');
    const claims = JSON.parse(Buffer.from(payload, 'base64url'));
    if (claims.iss !== ISSUER || claims.aud !== clientID || claims.exp * 1000 < Date.now()) throw new Error('bad claims');
    return claims;
  }
  return createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    const code = new URLSearchParams(body).get('code');
    const reply = (status, value) => response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
    const exchange = await fetch(`${apple}/auth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: clientID, client_secret: clientSecret(), redirect_uri: redirectURI }) });
    const tokens = await exchange.json();
    if (!exchange.ok) return reply(401, { error: `apple said ${tokens.error}` });
    try {
      const claims = await verified(tokens.id_token);
      reply(200, { sub: claims.sub, email: claims.email });
    } catch (error) {
      reply(401, { error: error.message });
    }
  });
}

// ---- its test ----

let mock, backend, url;
before(async () => {
  mock = await start({ notifications: false });
  backend = appleSignInBackend({ apple: mock.url, clientID: 'com.example.web', redirectURI: 'https://app.example.com/callback', clientSecret: () => mock.clientSecret('com.example.web') });
  await new Promise((resolve) => backend.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${backend.address().port}/auth/apple`;
});
after(async () => {
  backend?.close();
  await mock?.stop();
});

async function callback(form) {
  const answer = await fetch(url, { method: 'POST', body: new URLSearchParams(form) });
  return { status: answer.status, body: await answer.json() };
}

test('the backend signs a user in from the form Apple posts, once', async () => {
  const { form } = await mock.authorizeWeb('alice', { response_mode: 'form_post', scope: 'name email' });
  const signedIn = await callback(form);
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.body.email, 'alice@example.com');
  assert.match(signedIn.body.sub, /^\d{6}\.[0-9a-f]{32}\.\d{4}$/);
  // The twin: Apple's codes work once, and the backend says so.
  assert.deepEqual(await callback(form), { status: 401, body: { error: 'apple said invalid_grant' } });
});

test('the backend refuses an id_token it cannot verify', async () => {
  const { form } = await mock.authorizeWeb('alice', { response_mode: 'form_post' });
  // Apple's endpoint answers with a token signed by a key /auth/keys does not publish.
  await mock.faults.add({ path: '/auth/token', times: 1, action: 'respond', status: 200,
    headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ id_token: await mock.token('alice', { clientID: 'com.example.web', defect: 'bad-signature' }) }) });
  assert.deepEqual(await callback(form), { status: 401, body: { error: 'bad signature' } });
});
