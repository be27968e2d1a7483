// The kit against a real mock: every method drives it, and each accepted input has its refused
// twin. One mock serves the file; each test starts from reset().
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, test } from 'node:test';
import { AppleIDMock, AppleIDMockError, attach, BUILT_IN_KEY, findBinary, MAX_SECRET_LIFETIME, start } from 'appleid-mock';
import { BINARY, KIT, processesNaming, privateTmp } from './helpers.js';

const APP = 'com.example.app';
let mock;

before(async () => { mock = await start(); });
after(async () => { if (mock) assert.equal(await mock.stop(), 0); });
beforeEach(async () => { await mock.reset(); });

// POST /auth/token with `fields`, as a backend sends it: {status, body}.
async function token(fields) {
  const answer = await fetch(`${mock.url}/auth/token`, { method: 'POST', body: new URLSearchParams(fields) });
  // Apple's answers are JSON, but for an outage's HTML page or a fault's empty body.
  const text = await answer.text();
  return { status: answer.status, body: /json/.test(answer.headers.get('content-type')) ? JSON.parse(text) : text };
}

function exchange(code, secret = mock.clientSecret(APP), clientID = APP) {
  return token({ grant_type: 'authorization_code', code, client_id: clientID, client_secret: secret });
}

async function signedBy(idToken) {
  const [header, claims, signature] = idToken.split('.');
  const { kid } = JSON.parse(Buffer.from(header, 'base64url'));
  const { keys } = await (await fetch(`${mock.url}/auth/keys`)).json();
  const jwk = keys.find((k) => k.kid === kid);
  const valid = verify('sha256', Buffer.from(`${header}.${claims}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'));
  return { valid, kid, claims: JSON.parse(Buffer.from(claims, 'base64url')) };
}

function otherKey() {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
}

test('sign in, exchange, verify against /auth/keys, revoke, and the verified notification arrives', async () => {
  const credential = await mock.signIn('alice', APP);
  assert.equal(credential.email, 'alice@example.com');
  const { status, body } = await exchange(credential.authorizationCode);
  assert.equal(status, 200, JSON.stringify(body));
  const { valid, claims } = await signedBy(body.id_token);
  assert.ok(valid);
  assert.equal(claims.aud, APP);
  assert.equal(claims.iss, 'https://appleid.apple.com');
  await mock.fireEvent('consent-revoked', 'alice', APP);
  const notification = await mock.notifications.next();
  assert.equal(notification.type, 'consent-revoked');
  assert.equal(notification.sub, claims.sub);
  // The twin: the code works once.
  assert.deepEqual(await exchange(credential.authorizationCode),
    { status: 400, body: { error: 'invalid_grant', error_description: 'The code has already been used.' } });
});

test("clientSecret is accepted up to Apple's six months; one from another key is refused, and refusals() says why", async () => {
  const longest = mock.clientSecret(APP, { lifetime: MAX_SECRET_LIFETIME });
  assert.equal((await exchange((await mock.signIn('alice', APP)).authorizationCode, longest)).status, 200);
  assert.throws(() => mock.clientSecret(APP, { lifetime: MAX_SECRET_LIFETIME + 1 }),
    { name: 'AppleIDMockError', message: "clientSecret: lifetime 15777001 is outside 1…15777000 s (Apple's six months)" });
  const mark = await mock.journalMark();
  const refused = await exchange((await mock.signIn('alice', APP)).authorizationCode, mock.clientSecret(APP, { key: otherKey() }));
  assert.deepEqual(refused, { status: 400, body: { error: 'invalid_client' } });
  assert.deepEqual(await mock.refusals(mark),
    ['POST /auth/token 400 invalid_client — client_secret signature does not verify with key MOCKKEY001 of team MOCKTEAM01']);
  // A secret for another client is refused with that reason too.
  const mark2 = await mock.journalMark();
  await exchange((await mock.signIn('alice', APP)).authorizationCode, mock.clientSecret('com.example.web'));
  assert.deepEqual(await mock.refusals(mark2),
    ['POST /auth/token 400 invalid_client — client_secret sub is com.example.web but client_id is com.example.app']);
});

test('clientSecret refuses a key that is not P-256, and a key id without its key', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
  assert.throws(() => mock.clientSecret(APP, { key: rsa }), { message: 'clientSecret: the key given: the key is rsa, not an EC P-256 key' });
  assert.throws(() => mock.clientSecret(APP, { keyID: 'OTHERKEY01' }), /is not the built-in test key; pass \{key\}/);
  // The built-in key is the repository's committed test key.
  assert.equal(readFileSync(BUILT_IN_KEY, 'utf8'), readFileSync(new URL('../../../Keys/AuthKey_MOCKKEY001.p8', import.meta.url), 'utf8'));
});

test('authorizeWeb delivers as Apple would, and an unknown response_mode is refused naming the field', async () => {
  const posted = await mock.authorizeWeb('alice', { response_mode: 'form_post', scope: 'name email', state: 's1' });
  assert.deepEqual([posted.method, posted.url, posted.form.state], ['POST', 'https://app.example.com/callback', 's1']);
  assert.deepEqual(JSON.parse(posted.form.user), { name: { firstName: 'Alice', lastName: 'Appleseed' }, email: 'alice@example.com' });
  // The twin: Apple sends the user only the first time.
  assert.equal((await mock.authorizeWeb('alice', { response_mode: 'form_post', scope: 'name email' })).form.user, undefined);
  const web = await mock.authorizeWeb('alice', { state: 's2' });
  assert.equal(web.method, 'GET');
  assert.match(web.url, /^https:\/\/app\.example\.com\/callback\?code=c[^&]+&state=s2$/);
  const popup = await mock.authorizeWeb('alice', { response_mode: 'web_message', state: 's3' });
  assert.deepEqual([popup.method, popup.target_origin], ['postMessage', 'https://app.example.com']);
  assert.equal(JSON.parse(popup.message).data.authorization.state, 's3');
  await assert.rejects(mock.authorizeWeb('alice', { response_mode: 'web_msg' }), (error) => {
    assert.ok(error instanceof AppleIDMockError);
    assert.equal(error.status, 400);
    assert.match(error.message, /\(field response_mode\)$/);
    return true;
  });
});

test('faults: one installed acts once and is listed; one on a /__mock path is refused; an incident lasts its minutes', async () => {
  const fault = await mock.faults.add({ path: '/auth/token', times: 1, action: 'respond', status: 503 });
  assert.deepEqual([fault.id, fault.remaining], ['f1', 1]);
  assert.deepEqual((await mock.faults.list()).map((f) => f.id), ['f1']);
  const code = (await mock.signIn('alice', APP)).authorizationCode;
  assert.equal((await exchange(code)).status, 503);
  assert.equal((await exchange(code)).status, 200);
  // Spent, it stays listed (fired once, none remaining) until cleared.
  assert.deepEqual((await mock.faults.list()).map((f) => [f.id, f.fired, f.remaining]), [['f1', 1, 0]]);
  assert.equal(await mock.faults.clear(), 1);
  assert.deepEqual(await mock.faults.list(), []);
  await assert.rejects(mock.faults.add({ path: '/__mock/reset', action: 'close' }), /\(field path\)$/);

  const installed = await mock.faults.incident('token-endpoint-outage', 1);
  assert.equal(installed.incident, 'token-endpoint-outage');
  const later = (await mock.signIn('alice', APP)).authorizationCode;
  assert.equal((await exchange(later)).status, 503);
  await mock.advanceClock(61);
  assert.equal((await exchange(later, mock.clientSecret(APP, { issuedAt: Date.now() / 1000 + 61 }))).status, 200);
  assert.deepEqual(await mock.faults.list(), []);
  await assert.rejects(mock.faults.incident('no-such-incident'), /^AppleIDMockError: POST \/__mock\/faults answered 400: .* \(field incident\)$/);
});

test('rotateKeys: a fresh key signs, the previous stays published, and the receiver follows the new kid', async () => {
  const before = (await (await fetch(`${mock.url}/auth/keys`)).json()).keys.map((k) => k.kid).sort();
  const rotated = await mock.rotateKeys();
  assert.equal(rotated.previous, 'W2ek7HdPaL');
  const after = (await (await fetch(`${mock.url}/auth/keys`)).json()).keys.map((k) => k.kid).sort();
  assert.deepEqual(after, [...before, rotated.kid].sort());
  const { body } = await exchange((await mock.signIn('alice', APP)).authorizationCode);
  assert.equal((await signedBy(body.id_token)).kid, rotated.kid);
  await mock.fireEvent('consent-revoked', 'alice', APP);
  const notification = await mock.notifications.next();
  assert.deepEqual([notification.type, notification.kid], ['consent-revoked', rotated.kid]);
});

test('changePassword ends the refresh token with no notification; an unknown user is refused naming the field', async () => {
  const secret = mock.clientSecret(APP);
  const { body: tokens } = await exchange((await mock.signIn('alice', APP)).authorizationCode, secret);
  const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: APP, client_secret: secret };
  assert.equal((await token(refresh)).status, 200);
  assert.deepEqual(await mock.changePassword('alice'), { notification: null, notifications: [], type: 'password-changed', user: 'alice' });
  assert.deepEqual(await token(refresh), { status: 400, body: { error: 'invalid_grant' } });
  await assert.rejects(mock.changePassword('mallory'), (error) => error.status === 404 && /\(field user\)$/.test(error.message));
});

test('reset makes the next sign-in a first one again; without it the second has no email', async () => {
  assert.equal((await mock.signIn('alice', APP)).email, 'alice@example.com');
  assert.equal((await mock.signIn('alice', APP)).email, null);
  await mock.reset();
  assert.equal((await mock.signIn('alice', APP)).email, 'alice@example.com');
});

test('requests() is the journal, filtered; a refused control call carries the reason and field', async () => {
  const mark = await mock.journalMark();
  await mock.signIn('bob', APP);
  const journal = await mock.requests({ path: '/__mock/sign-in', after: mark });
  assert.deepEqual(journal.map((r) => [r.method, r.path, r.status]), [['POST', '/__mock/sign-in', 200]]);
  assert.deepEqual(await mock.requests({ path: '/auth/token', after: mark }), []);
  await assert.rejects(mock.signIn('nobody', APP),
    { name: 'AppleIDMockError', status: 400, message: 'POST /__mock/sign-in answered 400: no user "nobody" in the scenario (field user)' });
});

test('attach() drives a mock something else runs; nothing listening is named', async () => {
  const attached = await attach(mock.url);
  assert.equal((await attached.signIn('alice', APP)).email, 'alice@example.com');
  assert.ok(attached instanceof AppleIDMock);
  await assert.rejects(attach('http://127.0.0.1:9', { timeout: 0.2 }),
    /^AppleIDMockError: http:\/\/127\.0\.0\.1:9 did not answer \/__mock\/health within 0\.2 s: GET http:\/\/127\.0\.0\.1:9\/__mock\/health: connect ECONNREFUSED/);
  assert.throws(() => new AppleIDMock('127.0.0.1:8080'), /is not an http:\/\/ or https:\/\/ URL/);
});

test("a scenario the mock refuses fails start() with the mock's words and leaves nothing running", async () => {
  const tmp = privateTmp();
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    await assert.rejects(start({ scenario: { teams: 5 } }), (error) => {
      assert.match(error.message, /^appleid-mock serve exited 2 before listening/);
      assert.match(error.message, /teams: expected an array/);
      return true;
    });
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  assert.deepEqual(processesNaming(tmp), []);
  // The twin: a scenario of the mock's own is served.
  const served = await start({ scenario: JSON.parse(execFileSync(BINARY, ['scenario', 'print'], { encoding: 'utf8' })), notifications: false });
  try {
    assert.equal(served.notifications, undefined);
    assert.equal((await served.health()).status, 'ok');
  } finally {
    assert.equal(await served.stop(), 0);
  }
});

test('findBinary: the option beats APPLEID_MOCK_BIN, and a path that is not an executable is named', () => {
  assert.equal(findBinary(BINARY), BINARY);
  assert.throws(() => findBinary(`${KIT}package.json`), { message: `the appleid-mock binary ${KIT}package.json is not an executable file` });
  const previous = process.env.APPLEID_MOCK_BIN;
  process.env.APPLEID_MOCK_BIN = '/nonexistent/appleid-mock';
  try {
    assert.throws(() => findBinary(), { message: 'the appleid-mock binary /nonexistent/appleid-mock is not an executable file' });
    assert.equal(findBinary(BINARY), BINARY);
  } finally {
    process.env.APPLEID_MOCK_BIN = previous;
  }
});
