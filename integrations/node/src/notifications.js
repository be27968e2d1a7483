// A receiver for Apple's server-to-server notifications, wired into the scenario start() serves:
// it verifies each one as a careful backend would and hands it to the test. Verified means RS256
// under a key /auth/keys publishes (fetched again for an unknown kid), iss the mock's issuer, aud
// a client of the scenario, iat not after the mock's clock, and an events claim (a JSON string,
// as Apple sends it, or an object) with a type. It answers 200, or 400 with the reason (the
// mock's delivery log then shows the attempt and retries it).
import http from 'node:http';
import { AppleIDMockError } from './mock.js';
import { decodeUnverified, rs256Valid } from './jose.js';

const MAX_BODY_BYTES = 1 << 20;
export const NOTIFICATION_PATH = '/apple/notifications';

export class NotificationReceiver {
  #server; #records = []; #waiters = []; #keys = new Map(); #mock = null; #next = 0;

  // Listening on 127.0.0.1 and a free port once `await receiver.listen()` answers.
  constructor() {
    this.#server = http.createServer((request, response) => this.#serve(request, response));
    this.#server.requestTimeout = 30_000;
    this.url = null;
  }

  listen(host = '127.0.0.1') {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, host, () => {
        // A receiver nobody closed must not keep the test process alive.
        this.#server.unref();
        this.url = `http://${host}:${this.#server.address().port}${NOTIFICATION_PATH}`;
        resolve(this);
      });
    });
  }

  // Verify against `mock` (its keys, issuer, clock and scenario) from now on.
  attach(mock) { this.#mock = mock; }

  close() {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections?.();
    });
  }

  // How many notifications (verified or not) arrived so far.
  get received() { return this.#records.length; }

  // The next verified notification, {type, sub, events, claims, kid, token}, waiting up to
  // `timeout` s; one that failed verification throws, saying why. Calls made together each get
  // their own: the place is taken when next() is called, and given back if it times out last.
  async next({ timeout = 30 } = {}) {
    const index = this.#next;
    this.#next = index + 1;
    const record = await this.#waitFor(index, timeout);
    if (record === undefined) {
      if (this.#next === index + 1) this.#next = index;
      throw new AppleIDMockError(`no notification arrived at ${this.url} within ${timeout} s (the mock's delivery log, GET /__mock/notifications, says where it went)`);
    }
    if (record.error) throw new AppleIDMockError(`a notification failed verification: ${record.error}`);
    return record;
  }

  #waitFor(index, timeout) {
    if (index < this.#records.length) return Promise.resolve(this.#records[index]);
    return new Promise((resolve) => {
      const waiter = { index, resolve };
      waiter.timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(undefined);
      }, timeout * 1000);
      this.#waiters.push(waiter);
    });
  }

  #serve(request, response) {
    const answer = (status, body) => {
      const text = JSON.stringify(body);
      response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      response.end(text);
    };
    if (request.method !== 'POST') {
      answer(405, { error: `${request.method} is not POST` });
      return;
    }
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', async () => {
      let record;
      try {
        if (size > MAX_BODY_BYTES) throw new Error(`the body is over ${MAX_BODY_BYTES} bytes`);
        record = await this.#verify(Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        record = { error: error.message, body: Buffer.concat(chunks).toString('utf8').slice(0, 2000) };
      }
      this.#records.push(record);
      for (const waiter of this.#waiters.filter((w) => w.index < this.#records.length)) {
        clearTimeout(waiter.timer);
        waiter.resolve(this.#records[waiter.index]);
      }
      this.#waiters = this.#waiters.filter((w) => w.index >= this.#records.length);
      answer(record.error ? 400 : 200, record.error ? { error: record.error } : { ok: true });
    });
  }

  async #verify(body) {
    let token;
    try {
      token = JSON.parse(body).payload;
    } catch {
      throw new Error('the body is not JSON');
    }
    if (typeof token !== 'string') throw new Error('the body has no payload string');
    const { header, claims } = decodeUnverified(token);
    if (header.alg !== 'RS256') throw new Error(`alg is ${JSON.stringify(header.alg)}, not RS256`);
    const mock = this.#mock;
    if (!mock) throw new Error('no mock attached to verify against');
    const kid = header.kid;
    if (!this.#keys.has(kid)) this.#keys = new Map((await mock.call('GET', '/auth/keys')).keys.map((key) => [key.kid, key]));
    if (!this.#keys.has(kid)) throw new Error(`kid ${JSON.stringify(kid)} is not published at /auth/keys`);
    if (!rs256Valid(token, this.#keys.get(kid))) throw new Error(`the RS256 signature does not verify under ${kid}`);
    const { issuer } = await mock.health();
    if (claims.iss !== issuer) throw new Error(`iss is ${JSON.stringify(claims.iss)}, not ${JSON.stringify(issuer)}`);
    const clients = new Set((mock.scenario?.teams ?? []).flatMap((team) => (team.clients ?? []).map((c) => c.client_id)));
    if (clients.size > 0 && !clients.has(claims.aud)) throw new Error(`aud ${JSON.stringify(claims.aud)} is none of the scenario's clients`);
    const { epoch } = await mock.call('GET', '/__mock/clock');
    if (!Number.isInteger(claims.iat) || claims.iat > epoch + 60) throw new Error(`iat ${JSON.stringify(claims.iat)} is after the mock's clock (${epoch})`);
    let events = claims.events;
    if (typeof events === 'string') {
      try {
        events = JSON.parse(events);
      } catch {
        throw new Error('the events claim is a string that is not JSON');
      }
    }
    if (events === null || typeof events !== 'object' || !('type' in events)) throw new Error(`the events claim ${JSON.stringify(claims.events)} has no type`);
    return { type: events.type, sub: events.sub, events, claims, kid, token };
  }
}
