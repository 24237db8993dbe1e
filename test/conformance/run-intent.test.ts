import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { findProcesses, isAlive, killQuietly, type RigProcess, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';

// `one-works run` tells the orchestrator what it is about to create (its intent) before it loads
// its config, and the real droid starts at once: on the connection to a server that is up, or
// with the spawn of the server the command starts. Only the run's own createSession takes that
// droid; a run that fails its own checks, a client that dies, or an intent for a workspace the
// server does not approve leave no droid and no session directory.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const isDroid = (p: RigProcess): boolean => p.args.includes(' exec --input-format stream-jsonrpc');
// How long the server may take to stop a discarded droid.
const STOP_MS = 15_000;

const sessionsDir = (rig: CliRig): string => join(rig.stateDir, 'sessions');
const droids = (rig: CliRig): RigProcess[] => findProcesses(sessionsDir(rig)).filter(isDroid);
const orchestratorLog = (rig: CliRig): Promise<string> => readFile(join(rig.stateDir, 'orchestrator.log'), 'utf8');

// The intents' agents the server's log says started, and the sessions that took theirs.
const startedFor = (log: string): string[] =>
  [...log.matchAll(/intent: the agent of session (s-[0-9a-f]+) \(droid\) is starting/g)].map((m) => m[1]!);
const takenBy = (log: string): string[] =>
  [...log.matchAll(/intent: session (s-[0-9a-f]+) takes the agent started for its intent/g)].map((m) => m[1]!);

// The error lines of a command's stderr.
const errorLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('one-works: '));

// A `one-works serve` started by hand; resolves once its socket is there.
async function serve(rig: CliRig): Promise<ReturnType<CliRig['start']>> {
  const server = rig.start(['serve']);
  await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
  return server;
}

// The session id of a `--json run`'s result line.
function sessionOf(stdout: string): string {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { sessionId?: string })
    .find((v) => typeof v.sessionId === 'string');
  if (!line?.sessionId) throw new Error(`no session id in:\n${stdout}`);
  return line.sessionId;
}

// A client that connects, tells `intent` and prints the answer, then waits to be killed.
const INTENT_CLIENT = `
const net = require('node:net');
const socket = net.createConnection(process.argv[1]);
let buffer = '';
socket.on('data', (chunk) => {
  buffer += chunk;
  const end = buffer.indexOf('\\n');
  if (end >= 0) process.stdout.write(buffer.slice(0, end + 1));
});
socket.on('connect', () => socket.write(JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'intent', params: JSON.parse(process.argv[2]) }) + '\\n'));
setInterval(() => undefined, 1000);
`;

describe('run: the agent starts from the intent', () => {
  it('with the orchestrator up: the turn runs on the droid started for the intent', async () => {
    const model = await rigs.model({ steps: [{ text: 'from the intent' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const server = await serve(rig);

    const result = await rig.run(['--json', 'run', '-w', rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('from the intent');
    const id = sessionOf(result.stdout);
    server.kill('SIGTERM');
    const { stderr } = await server.result;
    expect(startedFor(stderr)).toEqual([id]);
    expect(takenBy(stderr)).toEqual([id]);
    expect(stderr).not.toMatch(/is discarded/);
    const record = await rig.readSession(id);
    expect(record.runs.map((r) => r.status)).toEqual(['completed']);
    expect(record.nativeSessionId).toBeDefined();
    // One droid session for the session: the started one served the turn (no second start).
    const events = await rig.readEvents(id);
    expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
  });

  it('with the orchestrator auto-started: the server starts the droid from the intent it was spawned with', async () => {
    const model = await rigs.model({ steps: [{ text: 'auto intent' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    const result = await rig.run(['--json', 'run', '-w', rig.workspace, '--title', 'an auto run', 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('auto intent');
    const id = sessionOf(result.stdout);
    const log = await orchestratorLog(rig);
    expect(startedFor(log)).toEqual([id]);
    expect(takenBy(log)).toEqual([id]);
    expect(await rig.readSession(id)).toMatchObject({ title: 'an auto run', runs: [{ status: 'completed' }] });
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
  });

  it("the server it starts sets its socket up only once the intent's droid has spawned", async () => {
    const model = await rigs.model({ steps: [{ text: 'socket after droid' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const socket = join(rig.stateDir, 'orchestrator.sock');
    const cli = rig.start(['run', '-w', rig.workspace, 'hello']);
    // Looked for at every turn of this loop: the first moment the socket is there.
    while (!existsSync(socket)) await new Promise((resolve) => setImmediate(resolve));
    expect(droids(rig)).toHaveLength(1);
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('socket after droid');
  });

  it('a run whose own check fails after its intent went out leaves no droid and no session directory, with the same error', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    // An effort droid's block refuses: the client's check fails once its config is loaded. The
    // scripted model is one the catalog checks, so the intent's droid starts without an effort.
    const args = ['run', '-w', rig.workspace, '--effort', 'bogus', 'never sent'];

    // Without a server: the intent goes with the spawn of the server this command starts.
    const auto = await rig.run(args);
    expect(auto.exitCode).not.toBe(0);
    expect(auto.stderr).toMatch(/--effort: /);
    // The server it started was asked to exit (unused). Whether it got to start the intent's droid
    // first depends on how the two raced; one it started, it discarded before it answered: its
    // session directory is gone already when the command has exited.
    expect(await readdir(sessionsDir(rig)).catch(() => [])).toEqual([]);
    await rig.untilNoServer();
    const log = await orchestratorLog(rig);
    for (const id of startedFor(log)) expect(log).toContain(`intent: the agent of session ${id} is discarded`);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
    expect(await readdir(sessionsDir(rig)).catch(() => [])).toEqual([]);

    const server = await serve(rig);
    const up = await rig.run(args);
    expect(up.exitCode).toBe(auto.exitCode);
    // The same error (a slow start may add a waiting notice to the auto-started case's stderr).
    expect(errorLines(up.stderr)).toEqual(errorLines(auto.stderr));
    expect(errorLines(up.stderr)).toHaveLength(1);
    // Discarded before the command exited: its session directory is gone already.
    expect(await readdir(sessionsDir(rig)).catch(() => [])).toEqual([]);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests.filter((r) => r.kind === 'step')).toEqual([]);
    server.kill('SIGTERM');
    const { stderr } = await server.result;
    // The intent's droid did start, and was discarded when the command gave its connection up.
    const [started] = startedFor(stderr);
    expect(started).toBeDefined();
    expect(stderr).toContain(`intent: the agent of session ${started} is discarded: its client gave it up`);
  });

  it('an intent for a workspace outside the approved roots spawns nothing', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const server = await serve(rig);
    const outside = await rigs.tempDir('ow-outside-');

    const answer = await tellIntent(join(rig.stateDir, 'orchestrator.sock'), { workspace: outside });
    expect(answer.result.intentId).toBeUndefined();
    expect(answer.result.reason).toMatch(/approved/);
    const refused = await rig.run(['run', '-w', outside, 'never sent']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/approved/);
    expect(droids(rig)).toEqual([]);
    expect(await readdir(sessionsDir(rig)).catch(() => [])).toEqual([]);
    server.kill('SIGTERM');
    const { stderr } = await server.result;
    expect(startedFor(stderr)).toEqual([]);
  });

  it('a client killed (SIGKILL) after its intent: its droid is gone within a bound, and its session directory', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const server = await serve(rig);

    const client = spawn(
      process.execPath,
      ['-e', INTENT_CLIENT, join(rig.stateDir, 'orchestrator.sock'), JSON.stringify({ workspace: rig.workspace })],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    rigs.defer(async () => killQuietly(client.pid!));
    let out = '';
    client.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await until(() => out.includes('\n'));
    const { intentId } = (JSON.parse(out) as { result: { intentId: string } }).result;
    expect(intentId).toMatch(/^s-/);
    await waitForProcess(() => droids(rig), isDroid);
    expect(existsSync(join(sessionsDir(rig), intentId))).toBe(true);

    client.kill('SIGKILL');
    await until(() => !isAlive(client.pid!));
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
    await until(() => !existsSync(join(sessionsDir(rig), intentId)));
    expect(await rig.sessionIds()).toEqual([]);
    server.kill('SIGTERM');
    const { stderr } = await server.result;
    expect(stderr).toContain(`intent: the agent of session ${intentId} is discarded: its client went away`);
  });
});

// Sends `intent` on a connection of its own and resolves the answer (then closes the connection).
function tellIntent(path: string, params: Record<string, unknown>): Promise<{ result: { intentId?: string; reason?: string } }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let buffer = '';
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.destroy();
      resolve(JSON.parse(buffer.slice(0, end)) as { result: { intentId?: string; reason?: string } });
    });
    socket.on('connect', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'c1', method: 'intent', params })}\n`));
  });
}
