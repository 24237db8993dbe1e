import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_INTENT_ID } from '../../cli/early-intent.js';
import { exitCodeFor } from '../../cli/exit-codes.js';
import { ERROR_CODES } from '../../core/errors.js';
import { BUILD_TIMEOUT_MS, buildPackage, copyPackage } from '../support/package-copy.js';
import { type FakeOrchestrator, fakeOrchestrator } from '../support/fake-orchestrator-socket.js';
import { findProcesses, waitForNoProcesses } from '../support/rig-processes.js';

// The installed `run` (cli/bin.cjs on a build) tells its intent from the early bundle
// (dist/cli/early-intent.cjs) before it loads the command's, and the command goes on on that same
// connection. Built here into a copy of the package (the checkout's own dist/ may be stale or in
// use); the orchestrator is a stand-in socket that answers `hello` with another fingerprint, so
// that the command stops there, refused, and drops its intent on its way out.

let root: string;
let pkg: string;
let work: string;
let fake: FakeOrchestrator;

beforeAll(async () => {
  ({ root, pkg } = await copyPackage('ow-early-intent-'));
  const built = await buildPackage(pkg);
  expect(built.exitCode, built.stderr).toBe(0);
  work = join(root, 'work');
  await mkdir(join(work, 'state'), { recursive: true });
  await mkdir(join(work, 'ws'));
  await writeFile(
    join(work, 'one-works.yaml'),
    `state: { directory: ${join(work, 'state')} }\nworkspaces: { approved: [${join(work, 'ws')}] }\n`,
  );
  fake = await fakeOrchestrator(join(work, 'state', 'orchestrator.sock'), {
    hello: { fingerprint: 'another-config', auto: false, pid: process.pid, clients: 1, live: 0, queued: 0 },
  });
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await new Promise((resolve) => fake?.server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

// The copy's installed `run` with a model flag, in `work`, with `env` added to an empty environment.
const installedRun = (env: Record<string, string>) =>
  execa(process.execPath, [join(pkg, 'cli', 'bin.cjs'), 'run', '-w', 'ws', '-m', 'model-a', 'hello'], {
    cwd: work,
    reject: false,
    stdin: 'ignore',
    env: { NODE_OPTIONS: '', ...env },
  });

describe('an installed run tells its intent before the command loads', () => {
  it('writes it from the early bundle and goes on on the same connection', async () => {
    const build = JSON.parse(await readFile(join(pkg, 'dist', 'build.json'), 'utf8')) as { early?: { bundle: string } };
    expect(build.early?.bundle).toBe('dist/cli/early-intent.cjs');

    // Not handed to the orchestrator (see below): the command loads here, as with an older server.
    const result = await installedRun({ ONE_WORKS_DELEGATE: '0' });
    expect(result.exitCode, result.stderr).toBe(exitCodeFor(ERROR_CODES.ORCHESTRATOR_MISMATCH));
    expect(result.stderr).toContain('runs with a different configuration or environment');
    // One connection: the early intent first, then the command's own requests, ending with the
    // drop of the intent no createSession took.
    expect(fake.connections).toHaveLength(1);
    const frames = fake.connections[0]!;
    expect(frames[0]).toMatchObject({ id: EARLY_INTENT_ID, method: 'intent', params: { workspace: join(work, 'ws'), model: 'model-a' } });
    expect(frames.map((f) => f.method)).toEqual(['intent', 'hello', 'intent.drop']);
  });
});

describe('an installed run hands itself to the orchestrator that listens', () => {
  it('tells its intent and the command line first; a server that does not run it (an older one) leaves it to the command', async () => {
    fake.connections.length = 0;
    const result = await installedRun({ OW_UNRELATED: 'kept' });
    // The command then ran here, as above: refused by this server's fingerprint.
    expect(result.exitCode, result.stderr).toBe(exitCodeFor(ERROR_CODES.ORCHESTRATOR_MISMATCH));
    expect(fake.connections).toHaveLength(2);
    const [handed, own] = fake.connections;
    expect(handed!.map((f) => f.method)).toEqual(['intent', 'command.run']);
    expect(handed![1]!.params).toMatchObject({
      args: ['run', '-w', join(work, 'ws'), '-m', 'model-a', 'hello'],
      cwd: work,
      env: { OW_UNRELATED: 'kept' },
      stdout: { isTTY: false },
      stderr: { isTTY: false },
    });
    expect(own!.map((f) => f.method)).toEqual(['intent', 'hello', 'intent.drop']);
  });
});

describe('an installed run with no orchestrator running', () => {
  it('on a config the full load refuses, fails with that error and leaves no server and no state behind', async () => {
    // The early bundle reads only where the state lives, and starts the server with the intent
    // before the command loads: that server fails on the same config, and the command, failing too,
    // removes the state directory made for it.
    const dir = join(root, 'invalid');
    await mkdir(join(dir, 'ws'), { recursive: true });
    const stateDir = join(dir, 'state');
    await writeFile(
      join(dir, 'one-works.yaml'),
      `state: { directory: ${stateDir} }\nworkspaces: { approved: [${join(dir, 'ws')}] }\norchestrator: { maxConcurrentRuns: many }\n`,
    );
    const result = await execa(process.execPath, [join(pkg, 'cli', 'bin.cjs'), 'run', '-w', 'ws', 'hello'], {
      cwd: dir,
      reject: false,
      stdin: 'ignore',
      env: { NODE_OPTIONS: '' },
    });
    expect(result.exitCode, result.stderr).toBe(exitCodeFor(ERROR_CODES.CONFIG_INVALID));
    expect(result.stderr).toContain('maxConcurrentRuns');
    expect(await waitForNoProcesses(() => findProcesses(dir), 15_000)).toEqual([]);
    expect(existsSync(stateDir)).toBe(false);
  });
});
