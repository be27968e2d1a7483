// The notification receiver verifies what a careful backend verifies: a genuine notification is
// taken (200) and handed to the test; each forgery is answered 400 and next() says why.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { after, before, test } from 'node:test';
import { start } from 'appleid-mock';

let mock;
before(async () => { mock = await start(); });
after(async () => { if (mock) assert.equal(await mock.stop(), 0); });

async function post(url, body, method = 'POST') {
  const answer = await fetch(url, { method, headers: { 'Content-Type': 'application/json' }, body: method === 'POST' ? body : undefined });
  return { status: answer.status, body: await answer.json() };
}

// A notification signed with a key of our own under the kid the mock signs with.
async function forged(claims) {
  const { active_kid: kid } = await mock.health();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ kid, alg: 'RS256' })}.${part(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

async function genuine(fields = {}, user = 'alice') {
  const answer = await mock.token(user, { clientID: 'com.example.app', kind: 'notification', type: 'consent-revoked', ...fields });
  return answer.payload ?? answer.token;
}

test('a genuine notification is taken, and each forgery is refused saying why', async () => {
  const receiver = mock.notifications;
  const claims = JSON.parse(Buffer.from((await genuine()).split('.')[1], 'base64url'));
  const cases = [
    [await genuine(), 200, null],
    [await forged(claims), 400, `the RS256 signature does not verify under ${(await mock.health()).active_kid}`],
    [await genuine({ defect: 'wrong-issuer' }), 400, 'iss is "https://appleid.apple.com.attacker.example", not "https://appleid.apple.com"'],
    [await forged({ ...claims, aud: 'com.attacker.app' }).then((t) => t.replace(/^[^.]+/, Buffer.from('{"kid":"nope","alg":"RS256"}').toString('base64url'))), 400, 'kid "nope" is not published at /auth/keys'],
    ['not.a.token', 400, "the token's header is not base64url JSON"],
    // Signed by the mock, each with one claim a careful backend refuses.
    [await genuine({ claims: { aud: 'com.attacker.app' } }), 400, 'aud "com.attacker.app" is none of the scenario\'s clients'],
    [await genuine({ defect: 'hs256-public-key' }), 400, 'alg is "HS256", not RS256'],
    [await genuine({ claims: { events: '{"sub":"x"}' } }), 400, 'the events claim "{\\"sub\\":\\"x\\"}" has no type'],
    [await genuine({ claims: { iat: claims.iat + 86_400 } }), 400, new RegExp(`^iat ${claims.iat + 86_400} is after the mock's clock \\(\\d+\\)$`)],
  ];
  for (const [payload, status, reason] of cases) {
    const answer = await post(receiver.url, JSON.stringify({ payload }));
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    if (reason === null) {
      assert.deepEqual(answer.body, { ok: true });
      const notification = await receiver.next({ timeout: 5 });
      assert.equal(notification.type, 'consent-revoked');
      assert.equal(notification.sub, JSON.parse(claims.events).sub);
    } else if (reason instanceof RegExp) {
      assert.match(answer.body.error, reason);
      await assert.rejects(receiver.next({ timeout: 5 }), { message: `a notification failed verification: ${answer.body.error}` });
    } else {
      assert.deepEqual(answer.body, { error: reason });
      await assert.rejects(receiver.next({ timeout: 5 }), { message: `a notification failed verification: ${reason}` });
    }
  }
  assert.equal(receiver.received, cases.length);
});

test('next() called twice at once hands out two notifications, one each, and a timed-out call gives its place back', async () => {
  const receiver = mock.notifications;
  const first = receiver.next({ timeout: 30 });
  const second = receiver.next({ timeout: 30 });
  for (const user of ['alice', 'bob']) {
    assert.equal((await post(receiver.url, JSON.stringify({ payload: await genuine({}, user) }))).status, 200);
  }
  const subs = [(await first).sub, (await second).sub];
  assert.notEqual(subs[0], subs[1]);
  // The twin: a call that times out takes nothing, and the next call gets the next notification.
  await assert.rejects(receiver.next({ timeout: 0.05 }), /no notification arrived/);
  assert.equal((await post(receiver.url, JSON.stringify({ payload: await genuine() }))).status, 200);
  assert.equal((await receiver.next({ timeout: 5 })).type, 'consent-revoked');
});

test('the receiver refuses what is not a notification, and next() times out naming where to look', async () => {
  const receiver = mock.notifications;
  assert.deepEqual(await post(receiver.url, '', 'GET'), { status: 405, body: { error: 'GET is not POST' } });
  for (const [body, reason] of [['{"payload": 5}', 'the body has no payload string'], ['x'.repeat((1 << 20) + 1), `the body is over ${1 << 20} bytes`]]) {
    assert.deepEqual(await post(receiver.url, body), { status: 400, body: { error: reason } });
    await assert.rejects(receiver.next({ timeout: 5 }), { message: `a notification failed verification: ${reason}` });
  }
  await assert.rejects(receiver.next({ timeout: 0.05 }), /^AppleIDMockError: no notification arrived at http:\/\/127\.0\.0\.1:\d+\/apple\/notifications within 0\.05 s/);
});
