// AppleIDMock: a running appleid-mock, driven through its control API (/__mock/…) with node:http.
// start() hands tests this object for a mock it started; attach() for one something else runs
// (the GitHub Action, compose, a container).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { es256Jwt, p256PrivateKey } from './jose.js';

// The committed test-only developer key of the built-in scenario (Keys/AuthKey_MOCKKEY001.p8 in
// the AppleIDMock repository; the mock has its public half). A copy ships with the package.
export const BUILT_IN_KEY = new URL('../AuthKey_MOCKKEY001.p8', import.meta.url);
export const BUILT_IN_TEAM = 'MOCKTEAM01';
export const BUILT_IN_KEY_ID = 'MOCKKEY001';
const APPLE_AUDIENCE = 'https://appleid.apple.com';
// Apple's limit on a client_secret's lifetime, six months (exp - iat).
export const MAX_SECRET_LIFETIME = 15777000;
// The most of an answer the kit reads (the mock's biggest, a page of the journal, is far less).
const MAX_ANSWER_BYTES = 64 << 20;

// The mock refused a request, or would not start: the message says why in the mock's own words
// (its JSON error and field, or the stderr of a mock that exited). `status` and `body` are the
// answer's, when there was one.
export class AppleIDMockError extends Error {
  constructor(message, { status, body } = {}) {
    super(message);
    this.name = 'AppleIDMockError';
    this.status = status;
    this.body = body;
  }
}

// mock.faults: faults on Apple's routes and on notification delivery (/__mock/faults).
class Faults {
  #mock;
  constructor(mock) { this.#mock = mock; }

  // Installs one fault (a scenario faults entry: {path: '/auth/token', times: 1, action: 'respond', status: 503}).
  add(fault) { return this.#mock.call('POST', '/__mock/faults', fault); }

  // One of Apple's own incidents (discovery-issuer-flip, jwks-without-signing-key,
  // token-endpoint-outage, notifications-once), for `minutes` of mock time when given.
  incident(name, minutes) {
    return this.#mock.call('POST', '/__mock/faults', minutes === undefined ? { incident: name } : { incident: name, minutes });
  }

  async list() { return (await this.#mock.call('GET', '/__mock/faults')).faults; }

  // Removes every fault, or every fault of `incident`; answers how many there were.
  async clear(incident) {
    return (await this.#mock.call('DELETE', '/__mock/faults', undefined, incident ? { incident } : undefined)).removed;
  }
}

export class AppleIDMock {
  #token; #timeout; #logs; #ca;

  // url: where it answers. scenario: the object it serves, when known (the defaults of
  // clientSecret and authorizeWeb come from it). ca: PEM text or a path, for an https mock.
  constructor(url, { ca, controlToken, scenario, logs, timeout = 30 } = {}) {
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new AppleIDMockError(`the mock's url ${JSON.stringify(url)} is not an http:// or https:// URL`);
    this.url = url.replace(/\/+$/, '');
    this.scenario = scenario ?? null;
    this.faults = new Faults(this);
    this.#token = controlToken;
    this.#timeout = timeout;
    this.#logs = logs;
    this.#ca = ca === undefined || ca === null ? undefined : String(ca).includes('-----BEGIN') ? String(ca) : readFileSync(ca, 'utf8');
  }

  // ---- Apple's side of a sign-in ----

  // The ES256 client_secret your backend sends /auth/token for `clientID` (default: the team's
  // first Services ID), signed by the team's developer key: the built-in test key unless `key`
  // is a .p8 path or its PEM text.
  clientSecret(clientID, { teamID, keyID, key, lifetime = 3600, issuedAt } = {}) {
    const team = this.#team(teamID, clientID);
    teamID = teamID ?? team?.team_id ?? BUILT_IN_TEAM;
    keyID = keyID ?? team?.developer_keys?.[0]?.key_id ?? BUILT_IN_KEY_ID;
    if (clientID === undefined || clientID === null) {
      const clients = team?.clients ?? [{ client_id: 'com.example.web', type: 'services_id' }];
      clientID = (clients.find((c) => c.type === 'services_id') ?? clients[0]).client_id;
    }
    let pem;
    if (key === undefined || key === null) {
      if (keyID !== BUILT_IN_KEY_ID) {
        throw new AppleIDMockError(`clientSecret: key ${keyID} of team ${teamID} is not the built-in test key; pass {key} (the path of its .p8, or its PEM)`);
      }
      pem = readFileSync(BUILT_IN_KEY, 'utf8');
    } else {
      pem = String(key).includes('-----BEGIN') ? String(key) : readFileSync(key, 'utf8');
    }
    if (!Number.isInteger(lifetime) || lifetime <= 0 || lifetime > MAX_SECRET_LIFETIME) {
      throw new AppleIDMockError(`clientSecret: lifetime ${lifetime} is outside 1…${MAX_SECRET_LIFETIME} s (Apple's six months)`);
    }
    let signingKey;
    try {
      signingKey = p256PrivateKey(pem);
    } catch (error) {
      const named = key === undefined || key === null ? 'MOCKKEY001' : String(key).includes('-----BEGIN') ? 'the key given' : `key ${key}`;
      throw new AppleIDMockError(`clientSecret: ${named}: ${error.message}`);
    }
    const now = issuedAt === undefined ? Math.floor(Date.now() / 1000) : Math.floor(issuedAt);
    return es256Jwt({ alg: 'ES256', kid: keyID }, { iss: teamID, iat: now, exp: now + lifetime, aud: APPLE_AUDIENCE, sub: clientID }, signingKey);
  }

  // A native (iOS) sign-in: what ASAuthorizationAppleIDCredential hands the app (user,
  // identityToken, authorizationCode, the first time email and fullName). fields: nonce,
  // scopes, hide_email, defect.
  signIn(user, clientID, fields = {}) {
    return this.call('POST', '/__mock/sign-in', { ...fields, user, client_id: clientID });
  }

  // The web flow without a browser (POST /__mock/authorize): how Apple would deliver the result
  // to the redirect URI. response_mode query or fragment: {method: 'GET', url, form: {}};
  // form_post: {method: 'POST', url, form}; web_message: {message, method: 'postMessage',
  // target_origin}, message the exact string Sign in with Apple JS's popup posts to
  // window.opener. clientID and redirectURI default to the scenario's first Services ID and its
  // first redirect URI; parameters are the authorize parameters (state, nonce, response_mode,
  // scope, code_challenge, …) and the user's choices (hide_email, cancel, defect).
  authorizeWeb(user, { clientID, redirectURI, ...parameters } = {}) {
    if (clientID === undefined || redirectURI === undefined) {
      const client = this.#servicesClient(clientID);
      clientID ??= client.client_id;
      redirectURI ??= client.redirect_uris?.[0];
    }
    const body = { response_type: 'code', ...parameters, user, client_id: clientID };
    if (redirectURI !== undefined) body.redirect_uri = redirectURI;
    return this.call('POST', '/__mock/authorize', body);
  }

  // A forged id_token for `user`, genuine or with one defect (expired, wrong-audience, alg-none,
  // …), changing nothing in the mock. With other fields (kind: 'notification', type) the whole
  // answer.
  async token(user = 'alice', { clientID, defect, nonce, claims, ...fields } = {}) {
    const body = { ...fields, user };
    for (const [name, value] of [['client_id', clientID], ['defect', defect], ['nonce', nonce], ['claims', claims]]) {
      if (value !== undefined) body[name] = value;
    }
    const answer = await this.call('POST', '/__mock/tokens', body);
    return 'id_token' in answer && Object.keys(fields).length === 0 ? answer.id_token : answer;
  }

  // ---- the world around it ----

  // Moves the mock clock on by `seconds`; answers the clock.
  advanceClock(seconds) { return this.call('POST', '/__mock/clock', { advance: seconds }); }

  // One step of Apple's key rotation: a fresh key signs, the previous ones stay published.
  rotateKeys() { return this.call('POST', '/__mock/keys/rotate', {}); }

  // A user's action at Apple (consent-revoked, account-delete, email-disabled, email-enabled):
  // the state changes and the app group's signed notification is queued.
  fireEvent(type, user, clientID) { return this.call('POST', '/__mock/events', { type, user, client_id: clientID }); }

  // The user changed their Apple Account password: their refresh tokens for every app answer
  // invalid_grant, no notification is sent, the credential state stays authorized.
  changePassword(user) { return this.call('POST', '/__mock/events', { type: 'password-changed', user }); }

  // The request journal, oldest first, with the reason for each refusal. Filters: method, path,
  // client_id, grant_type, status ('400', '4xx'), control, after, limit, wait.
  async requests(filters = {}) {
    const query = {};
    for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== null) query[name] = String(value);
    return (await this.call('GET', '/__mock/requests', undefined, query)).requests;
  }

  // Back to the scenario's start: users, consents, codes, transfers, keys and clock.
  reset() { return this.call('POST', '/__mock/reset', {}); }

  // {active_kid, issuer, status}.
  health() { return this.call('GET', '/__mock/health'); }

  // ---- reading what went wrong ----

  // The id of the newest journal entry (0 with the journal off): later entries come after it.
  async journalMark() {
    try {
      return (await this.call('GET', '/__mock/requests', undefined, { limit: '1', after: '0', control: 'false' })).newest ?? 0;
    } catch {
      return 0;
    }
  }

  // The requests to Apple's routes the mock refused after journal id `after`, one line each with
  // the reason its stderr gave: 'POST /auth/token 400 invalid_client — client_secret …'.
  async refusals(after = 0) {
    let entries;
    try {
      entries = await this.requests({ after, control: false, status: '4xx', limit: 1000 });
    } catch (error) {
      return [`(the journal is unavailable: ${error.message})`];
    }
    return entries.map((e) => `${e.method} ${e.path} ${e.status} ${e.error ?? ''} — ${e.reason ?? 'no reason given'}`.replace('  ', ' '));
  }

  // What the mock wrote to stderr so far, when this object knows (a process it started).
  logs() { return this.#logs ? [...this.#logs()] : []; }

  // ---- plumbing ----

  // One control or Apple request: the answer's JSON, or an AppleIDMockError naming what the mock
  // said (its error and field). Never through a proxy: the mock is local to the tests.
  call(method, path, body, query) {
    const target = new URL(this.url + path);
    for (const [name, value] of Object.entries(query ?? {})) target.searchParams.set(name, value);
    const headers = { Accept: 'application/json' };
    let data;
    if (body !== undefined) {
      data = Buffer.from(JSON.stringify(body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(data.length);
    }
    if (this.#token) headers.Authorization = `Bearer ${this.#token}`;
    const transport = target.protocol === 'https:' ? https : http;
    const timeout = (this.#timeout + Number(query?.wait ?? 0)) * 1000;
    return new Promise((resolve, reject) => {
      const request = transport.request(target, { method, headers, agent: false, ca: this.#ca, timeout }, (answer) => {
        const chunks = [];
        let size = 0;
        answer.on('data', (chunk) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            request.destroy(new Error(`the answer is over ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        answer.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json;
          try {
            json = text ? JSON.parse(text) : {};
          } catch {
            json = undefined;
          }
          if (answer.statusCode >= 200 && answer.statusCode < 300) {
            if (json === undefined) reject(new AppleIDMockError(`${method} ${path} answered ${answer.statusCode} with no JSON: ${text.slice(0, 500)}`, { status: answer.statusCode, body: text }));
            else resolve(json);
            return;
          }
          let said;
          if (json && typeof json === 'object' && 'error' in json) said = json.error + (json.field ? ` (field ${json.field})` : '');
          else said = text.slice(0, 500) || answer.statusMessage;
          reject(new AppleIDMockError(`${method} ${path} answered ${answer.statusCode}: ${said}`, { status: answer.statusCode, body: json ?? text }));
        });
        answer.on('error', (error) => reject(new AppleIDMockError(`${method} ${target}: ${error.message}`)));
      });
      request.on('timeout', () => request.destroy(new Error(`no answer within ${timeout / 1000} s`)));
      request.on('error', (error) => {
        const failure = new AppleIDMockError(`${method} ${target}: ${error.message}`);
        failure.code = error.code;
        reject(failure);
      });
      request.end(data);
    });
  }

  // Asks /__mock/health until it answers (every 50 ms, at most `timeout` s). `alive`, when given,
  // is asked in between and its error ends the wait early; so does a certificate Node does not
  // trust (an https mock without its CA never becomes healthy).
  async waitUntilHealthy(timeout = this.#timeout, alive) {
    const deadline = Date.now() + timeout * 1000;
    for (;;) {
      let last;
      try {
        return await this.health();
      } catch (error) {
        last = error;
      }
      if (UNTRUSTED_CERTIFICATE.has(last.code)) {
        throw new AppleIDMockError(`${this.url} serves a certificate Node does not trust (${last.code}): give the kit its CA (the ca option, e.g. the cert.pem of \`appleid-mock tls generate\`)`);
      }
      alive?.();
      if (Date.now() >= deadline) throw new AppleIDMockError(`${this.url} did not answer /__mock/health within ${timeout} s: ${last.message}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  #team(teamID, clientID) {
    const teams = this.scenario?.teams ?? [];
    for (const team of teams) {
      if (teamID && team.team_id === teamID) return team;
      if (!teamID && clientID && (team.clients ?? []).some((c) => c.client_id === clientID)) return team;
    }
    return teamID ? undefined : teams[0];
  }

  #servicesClient(clientID) {
    const clients = (this.scenario?.teams ?? []).flatMap((team) => team.clients ?? []);
    if (clientID) return clients.find((c) => c.client_id === clientID) ?? { client_id: clientID };
    const found = clients.find((c) => c.type === 'services_id');
    if (!found) throw new AppleIDMockError('authorizeWeb: the scenario has no Services ID; pass clientID and redirectURI');
    return found;
  }
}

// The errors Node gives for a certificate chain it cannot trust or a name it does not cover.
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);
