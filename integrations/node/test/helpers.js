// What the kit's tests share: the binary, a private temporary directory per child process (the
// scenario files of the mocks it starts live there, so a scan of the process table finds them),
// and waits on conditions, never on the clock alone.
import { spawn } from 'node:child_process';
import { findBinary } from 'appleid-mock';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The binary the kit finds (APPLEID_MOCK_BIN or PATH): the tests run what start() runs.
export const BINARY = findBinary();
export const KIT = new URL('..', import.meta.url).pathname;
export const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;

export function privateTmp() {
  return mkdtempSync(join(tmpdir(), 'appleid-mock-kit-test-'));
}

// The pids of processes whose command line names `text` (the process table, /proc).
export function processesNaming(text) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      // A zombie (exited, not yet reaped) holds no command line and runs nothing.
    } catch {
      continue;
    }
    if (commandLine.includes(text)) found.push(Number(entry));
  }
  return found;
}

// Waits until no process names `text`; answers the ones still there after `limit` s (a bound for
// a broken kit, not a timing assertion: a working one is done in milliseconds).
export async function waitForNoProcessNaming(text, limit = 60) {
  const deadline = Date.now() + limit * 1000;
  for (;;) {
    const left = processesNaming(text);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Runs `command` with the environment plus `environment`; answers {status, signal, output}.
// `onLine` sees each stdout line as it comes (to act when a child says it is ready).
export function run(command, args, { environment = {}, cwd, onLine, detached = false } = {}) {
  return new Promise((resolve) => {
    // NODE_TEST_CONTEXT would make a child `node --test` think it runs inside this one.
    const { NODE_TEST_CONTEXT, ...inherited } = process.env;
    const child = spawn(command, args, { cwd, detached, env: { ...inherited, ...environment }, stdio: ['pipe', 'pipe', 'pipe'] });
    // A child waiting on its stdin (forgets-stop.mjs) goes on when told; the others never read it.
    child.stdin.on('error', () => {});
    let output = '';
    let pending = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        onLine?.(line, child);
      }
    });
    child.stderr.on('data', (chunk) => { output += chunk; });
    child.on('close', (status, signal) => resolve({ status, signal, output }));
  });
}
