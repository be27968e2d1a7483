// Every way out of a test process stops the mock it started: the process's own end with no
// stop(), a failing test, a failed health wait, and SIGINT, SIGTERM and SIGHUP. Each child runs
// with its own TMPDIR, where the kit writes the scenario the mock is started with, so the process
// table tells whether a mock of that child is still running.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { BINARY, FIXTURES, privateTmp, processesNaming, run, waitForNoProcessNaming } from './helpers.js';

async function runFixture(args, { signal, environment = {}, detached = false } = {}) {
  const tmp = privateTmp();
  let started = null;
  let seen = [];
  const result = await run(process.execPath, args, {
    detached,
    environment: { ...environment, TMPDIR: tmp },
    onLine(line, child) {
      const match = /started (\d+)/.exec(line);
      if (!match) return;
      started = Number(match[1]);
      seen = processesNaming(tmp);
      if (signal) process.kill(detached ? -child.pid : child.pid, signal);
      else child.stdin.end('go on\n');
    },
  });
  return { ...result, tmp, started, seen, left: await waitForNoProcessNaming(tmp) };
}

test('a process that ends without stop() stops its mock, and is not held open by it', async () => {
  const { status, started, seen, left, output } = await runFixture([`${FIXTURES}forgets-stop.mjs`]);
  assert.equal(status, 0, output);
  assert.ok(started, output);
  // The twin of every check below: while the child ran, its mock was in the process table.
  assert.deepEqual(seen, [started]);
  assert.deepEqual(left, []);
});

test('a failing test stops its mock, and node --test reports the failure', async () => {
  const { status, started, seen, left, output } = await runFixture(['--test', `${FIXTURES}failing-test.mjs`]);
  assert.equal(status, 1, output);
  assert.match(output, /not what it says/);
  assert.deepEqual(seen, [started]);
  assert.deepEqual(left, []);
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  test(`${signal} to the test process stops its mock, and the process still ends by ${signal}`, async () => {
    const { status, signal: ended, started, seen, left, output } = await runFixture([`${FIXTURES}waits.mjs`], { signal });
    assert.equal(status, null, output);
    assert.equal(ended, signal);
    assert.deepEqual(seen, [started]);
    assert.deepEqual(left, []);
  });
}

test('SIGTERM to node --test and its test files (a cancelled CI job) stops the mock', async () => {
  const { status, started, seen, left, output } = await runFixture(['--test', `${FIXTURES}failing-test.mjs`],
    { signal: 'SIGTERM', detached: true, environment: { KIT_TEST_WAIT: '1' } });
  assert.notEqual(status, 0, output);
  assert.deepEqual(seen, [started]);
  assert.deepEqual(left, []);
});

test('a failed health wait (https without the CA) stops the mock it started, saying what to give', async () => {
  const tls = privateTmp();
  execFileSync(BINARY, ['tls', 'generate', '--out', tls]);
  const refused = await runFixture([`${FIXTURES}tls-without-ca.mjs`, tls]);
  assert.equal(refused.status, 3, refused.output);
  assert.match(refused.output, /refused: https:\/\/127\.0\.0\.1:\d+ serves a certificate Node does not trust \(\w+\): give the kit its CA/);
  assert.deepEqual(refused.left, []);
  // The twin: with the CA the same mock is healthy (and stopped with the process).
  const trusted = await runFixture([`${FIXTURES}tls-without-ca.mjs`, tls], { environment: { KIT_TEST_CA: '1' } });
  assert.equal(trusted.status, 0, trusted.output);
  assert.match(trusted.output, /^healthy$/m);
  assert.deepEqual(trusted.left, []);
});
