// start(): `appleid-mock serve` as a child process. The binary found, a free port, the scenario
// written with the notification receiver wired in, health awaited, stderr kept for errors, and
// the process stopped on every way out: a failed start, stop(), the test process's exit, and
// SIGINT, SIGTERM and SIGHUP (Ctrl-C, a cancelled CI job). Only a SIGKILL of the test process,
// which nothing can catch, leaves the mock running.
import { spawn, execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { AppleIDMock, AppleIDMockError } from './mock.js';
import { NotificationReceiver } from './notifications.js';

// How many of the mock's stderr lines are kept (the newest).
const STDERR_LINES = 2000;

// The appleid-mock binary: `explicit` (the binary option), else APPLEID_MOCK_BIN, else
// appleid-mock on PATH. Throws naming every place it looked.
export function findBinary(explicit) {
  const named = explicit ?? process.env.APPLEID_MOCK_BIN;
  if (named) {
    if (!isExecutable(named)) throw new AppleIDMockError(`the appleid-mock binary ${named} is not an executable file`);
    return named;
  }
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory || '.', 'appleid-mock');
    if (isExecutable(candidate)) return candidate;
  }
  throw new AppleIDMockError('no appleid-mock binary: give the binary option or APPLEID_MOCK_BIN, or put appleid-mock on PATH (a release tarball, or `swift build` in a checkout)');
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

// A copy of `scenario` whose teams without a notification_url send theirs to `url`.
export function wireReceiver(scenario, url) {
  const wired = structuredClone(scenario);
  // A malformed scenario goes to the mock as it is: its refusal says what is wrong.
  for (const team of Array.isArray(wired?.teams) ? wired.teams : []) {
    if (team && typeof team === 'object' && !team.notification_url) team.notification_url = url;
  }
  return wired;
}

// The scenario as an object: `scenario` itself, the file it names, or the built-in one
// (`appleid-mock scenario print`) for undefined.
export function loadScenario(binary, scenario) {
  if (scenario !== undefined && scenario !== null && typeof scenario === 'object') return scenario;
  let text;
  if (scenario === undefined || scenario === null) {
    try {
      text = execFileSync(binary, ['scenario', 'print'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: mockEnvironment() });
    } catch (error) {
      throw new AppleIDMockError(`${binary} scenario print failed: ${String(error.stderr ?? error.message).trim()}`);
    }
  } else {
    try {
      text = readFileSync(scenario, 'utf8');
    } catch (error) {
      throw new AppleIDMockError(`scenario ${scenario}: ${error.message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppleIDMockError(`scenario ${scenario ?? '(built-in)'}: ${error.message}`);
  }
}

// The test process's environment without the mock's own variables: a developer's shell would
// change what is served.
function mockEnvironment(controlToken) {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('APPLEID_MOCK_')));
  if (controlToken) environment.APPLEID_MOCK_CONTROL_TOKEN = controlToken;
  return environment;
}

// ---- every mock this process started and has not stopped, stopped on the way out ----

const running = new Set();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let watching = false;

function stopAllNow() {
  for (const child of running) child.kill('SIGTERM');
  running.clear();
}

function onSignal(signal) {
  stopAllNow();
  // Another listener of the test process (a test runner's) decides what the signal does; with
  // none, the process ends by the signal as it would have without the kit.
  if (process.listenerCount(signal) === 1) {
    for (const name of SIGNALS) process.removeListener(name, onSignal);
    process.kill(process.pid, signal);
  }
}

function watch(child) {
  running.add(child);
  if (watching) return;
  watching = true;
  process.on('exit', stopAllNow);
  for (const name of SIGNALS) process.on(name, onSignal);
}

// A mock started by start(): the AppleIDMock a test drives, with stop() and what it wrote.
export class StartedMock extends AppleIDMock {
  #child; #stderr; #receiver; #directory; #exited;

  constructor(url, options, { child, stderr, receiver, directory, exited }) {
    super(url, { ...options, logs: () => stderr });
    this.#child = child;
    this.#stderr = stderr;
    this.#receiver = receiver;
    this.#directory = directory;
    this.#exited = exited;
    this.pid = child.pid;
    // The verified notifications (undefined with notifications: false).
    this.notifications = receiver;
  }

  // SIGTERM, then the exit status (0 for a clean stop); SIGKILL after `timeout` s. The receiver
  // closes and the scenario's temporary directory goes.
  async stop({ timeout = 20 } = {}) {
    running.delete(this.#child);
    let status;
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      holdOpen(this.#child, true);
      this.#child.kill('SIGTERM');
      const killer = setTimeout(() => this.#child.kill('SIGKILL'), timeout * 1000);
      status = await this.#exited;
      clearTimeout(killer);
    } else {
      status = await this.#exited;
    }
    await this.#receiver?.close();
    rmSync(this.#directory, { recursive: true, force: true });
    return status;
  }
}

// Starts `appleid-mock serve --port 0 --scenario FILE [serveArgs…]` and answers it healthy.
// options: binary, scenario (an object, a path, or undefined for the built-in one), serveArgs,
// port (0), ca (PEM or path, for --tls-cert), controlToken, notifications (true: a receiver
// wired into every team without a notification_url of its own), timeout (s, 30).
export async function start(options = {}) {
  const { binary: explicit, scenario: source, serveArgs = [], port = 0, ca, controlToken, notifications = true, timeout = 30 } = options;
  if (!Array.isArray(serveArgs) || serveArgs.some((a) => typeof a !== 'string')) throw new AppleIDMockError('start: serveArgs must be an array of strings');
  const binary = findBinary(explicit);
  let scenario = loadScenario(binary, source);
  const receiver = notifications ? await new NotificationReceiver().listen() : undefined;
  if (receiver) scenario = wireReceiver(scenario, receiver.url);
  const directory = mkdtempSync(join(tmpdir(), 'appleid-mock-'));
  const path = join(directory, 'scenario.json');
  writeFileSync(path, JSON.stringify(scenario, null, 2));
  const command = ['serve', '--port', String(port), '--scenario', path, ...serveArgs];
  const child = spawn(binary, command, { env: mockEnvironment(controlToken), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? 128 + (osConstants.signals[signal] ?? 0))));
  watch(child);
  const stderr = [];
  // A spawn that fails (ENOEXEC, a noexec mount) is told in the error start() gives, not thrown.
  child.on('error', (error) => stderr.push(`appleid-mock could not be run: ${error.message}`));
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > STDERR_LINES) stderr.shift();
  });
  const cleanUp = async () => {
    running.delete(child);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await receiver?.close();
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    const listening = await firstLine(child, exited);
    if (!listening.startsWith('listening on ')) {
      const status = await exited;
      throw new AppleIDMockError(`appleid-mock serve exited ${status} before listening (${binary} ${command.join(' ')}):\n${stderr.join('\n')}`);
    }
    const mock = new StartedMock(listening.slice('listening on '.length), { ca, controlToken, scenario, timeout },
      { child, stderr, receiver, directory, exited });
    receiver?.attach(mock);
    await mock.waitUntilHealthy(timeout, () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new AppleIDMockError(`appleid-mock exited ${child.exitCode ?? child.signalCode}:\n${stderr.join('\n')}`);
      }
    });
    // Healthy: the mock no longer holds the test process open; stop() or the exit ends it.
    holdOpen(child, false);
    return mock;
  } catch (error) {
    // A mock that never became healthy (an https one without its CA, say) is stopped here: the
    // caller gets no object to stop.
    await cleanUp();
    throw error;
  }
}

// Whether `child` keeps the test process's event loop alive.
function holdOpen(child, hold) {
  for (const handle of [child, child.stdout, child.stderr]) {
    if (hold) handle.ref?.();
    else handle.unref?.();
  }
}

function firstLine(child, exited) {
  return new Promise((resolve) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      lines.close();
      // The rest of stdout is read and dropped, so the mock never blocks on a full pipe.
      child.stdout.resume();
      resolve(line.trim());
    });
    exited.then(() => resolve(''));
  });
}

// A mock something else runs (the GitHub Action, compose, a container) at `url`, once healthy.
// options: ca, controlToken, scenario (an object or a path: the defaults of clientSecret and
// authorizeWeb), timeout. Nothing to stop.
export async function attach(url, options = {}) {
  let { scenario } = options;
  if (typeof scenario === 'string') scenario = loadScenario(undefined, scenario);
  const mock = new AppleIDMock(url, { ...options, scenario });
  await mock.waitUntilHealthy(options.timeout ?? 30);
  return mock;
}
