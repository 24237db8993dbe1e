import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../cli/exit-codes.js';
import { hash53 } from '../../core/config/value-cache.js';
import { ERROR_CODES } from '../../core/errors.js';
import { BUILD_TIMEOUT_MS } from '../support/package-copy.js';
import { CliRigs, type CliRig, ONE_WORKS_BIN, RIG_API_KEY, startOneWorks } from '../support/one-works-cli.js';
import { environmentInPty, runInPty } from '../support/pty-cli.js';
import { waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { executeStep, until } from './orchestrator-rig.js';

// A plain `run` whose orchestrator is up is handed to it by cli/bin.cjs (cli/early-intent.ts
// delegateRun): the orchestrator runs the command with the client's directory, environment and
// streams, and the client only prints what comes back (cli/daemon/delegated-run.ts). Each case
// runs the real droid against a scripted model, and compares with the same command run by the
// client itself (ONE_WORKS_DELEGATE=0) where the outcome must be the same.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ROOT = join(import.meta.dirname, '..', '..');
const SLOW_START = join(ROOT, 'test', 'peers', 'slow-serve-start.cjs');
// Only a build runs the delegation (the sources through tsx load the command themselves): the
// checkout's build is brought up to date first, as `npm run bench` does (in CI it is current).
beforeAll(async () => {
  const build = JSON.parse(readFileSync(join(ROOT, 'dist', 'build.json'), 'utf8').toString()) as {
    builtAt: number;
    early?: { bundle: string };
    sources?: Record<string, string[]>;
  };
  const stale = Object.values(build.sources ?? {})
    .flat()
    .some((file) => !existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).mtimeMs > build.builtAt);
  if (stale || !build.early) {
    const built = await execa(process.execPath, [join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, reject: false });
    expect(built.exitCode, built.stderr).toBe(0);
  }
}, BUILD_TIMEOUT_MS);

// The autonomy that lets the scripted commands run without asking anyone (no terminal here).
const RUNS_COMMANDS = { autonomy: 'high' };
// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;
const AGENT_CLOSE_MS = 15_000;
const NOT_DELEGATED = { ONE_WORKS_DELEGATE: '0' };

// Session ids, timestamps and durations differ between two runs of the same command.
const normalized = (text: string): string => text.replace(/s-[0-9a-f]{10}/g, 's-ID');

type Server = ReturnType<CliRig['start']>;
// What the server (started by hand: its log is its stderr) says of the commands clients handed it.
const ranHere = (server: Server): number => server.stderrSoFar().match(/command: ran a client's `run` here/g)?.length ?? 0;
const declined = (server: Server): number => server.stderrSoFar().match(/command: declined a client's `run`/g)?.length ?? 0;
// The server logs a command before it answers, but this process may read the server's stderr
// after the client's exit: waited for (a test timeout fails it), then counted exactly.
const handedOver = async (server: Server, count: number): Promise<void> => {
  await until(() => ranHere(server) + declined(server) >= count);
};

async function serve(rig: CliRig): Promise<Server> {
  const server = rig.start(['serve']);
  await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
  return server;
}

// A handed `run` whose turn is running `command` (a tool call of the scripted model, then `after`
// as its answer) in the real droid: the rig, its server, the client, droid's process, and every
// process of the rig but the server (which stays up, as a user's would).
async function runUntilTool(callId: string, command: string, after: string) {
  const model = await rigs.model({ steps: [executeStep(callId, command), { text: after }] });
  const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
  const server = await serve(rig);
  const cli = rig.start(['run', '-w', rig.workspace, 'run the command']);
  await until(() => rig.processes().some((p) => p.args === command));
  const droid = rig.processes().find((p) => p.args.includes(' exec --input-format stream-jsonrpc'))!;
  const others = () => rig.processes().filter((p) => p.pid !== server.pid);
  return { rig, server, cli, droid, others };
}

// Every file under `dir`, read (binary as latin1), for a search of a secret.
function readAll(dir: string): string {
  let all = '';
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) all += readFileSync(join(entry.parentPath, entry.name), 'latin1');
  }
  return all;
}

// The server's log (an auto-started one's is <state>/orchestrator.log): the commands it ran for
// clients, the agents started for intents and the sessions that took theirs.
const serverLog = (rig: CliRig): Promise<string> => readFile(join(rig.stateDir, 'orchestrator.log'), 'utf8');
const ranInLog = (log: string): number => log.match(/command: ran a client's `run` here/g)?.length ?? 0;
const startedFor = (log: string): string[] =>
  [...log.matchAll(/intent: the agent of session (s-[0-9a-f]+) \(droid\) is starting/g)].map((m) => m[1]!);
const takenBy = (log: string): string[] =>
  [...log.matchAll(/intent: session (s-[0-9a-f]+) takes the agent started for its intent/g)].map((m) => m[1]!);

describe('run that starts its orchestrator (none up)', () => {
  it('is handed to the server it started, which runs it on its intent’s droid; it prints and exits as the command run by itself', async () => {
    const model = await rigs.model({ steps: [{ text: 'started answer' }, { text: 'started answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const handed = await rig.run(['run', '-w', rig.workspace, 'hello']);
    expect(handed.exitCode, handed.stderr).toBe(0);
    expect(handed.stdout).toContain('started answer');
    const log = await serverLog(rig);
    expect(ranInLog(log)).toBe(1);
    // One droid started, for the intent the server was spawned with, and the command's session took it.
    const [id] = await rig.sessionIds();
    expect(startedFor(log)).toEqual([id]);
    expect(takenBy(log)).toEqual([id]);
    expect((await rig.run(['server', 'stop'])).exitCode).toBe(0);
    await rig.untilNoServer();

    // The same command, run by the client itself with the server it starts.
    const itself = await rig.run(['run', '-w', rig.workspace, 'hello'], { env: NOT_DELEGATED });
    expect(itself.exitCode, itself.stderr).toBe(0);
    expect(normalized(handed.stdout)).toBe(normalized(itself.stdout));
    expect(normalized(handed.stderr)).toBe(normalized(itself.stderr));
    const after = await serverLog(rig);
    expect(ranInLog(after)).toBe(1);
    expect(takenBy(after)).toHaveLength(2);
    for (const session of await rig.sessionIds()) expect((await rig.readSession(session)).runs.map((r) => r.status)).toEqual(['completed']);
  });

  it('on a machine that starts the server slowly, is still handed to it, the client saying that it waits', async () => {
    const model = await rigs.model({ steps: [{ text: 'slow start answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    // The server is held 4.5 s before it loads anything (a start that gets little CPU, as on a busy CI runner).
    const slow = { NODE_OPTIONS: `--require ${SLOW_START}`, OW_TEST_SERVE_HOLD_MS: '4500' };
    const handed = await rig.run(['run', '-w', rig.workspace, 'hello'], { env: slow });
    expect(handed.exitCode, handed.stderr).toBe(0);
    expect(handed.stdout).toContain('slow start answer');
    expect(handed.stderr).toMatch(
      /^waiting for the background orchestrator \(pid \d+\) to start, [3-9] s so far \(its output: .*orchestrator\.log\)$/m,
    );
    const log = await serverLog(rig);
    expect(ranInLog(log)).toBe(1);
    const [id] = await rig.sessionIds();
    expect(takenBy(log)).toEqual([id]);
  });

  it('a command that fails its own check there: the same error and exit code, and its intent’s droid discarded before it exits', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const args = ['run', '-w', rig.workspace, '--effort', 'bogus', 'never sent'];
    const handed = await rig.run(args);
    expect(handed.exitCode).not.toBe(0);
    expect(handed.stderr).toMatch(/--effort: /);
    // Nothing of the intent's droid is left once the command has exited.
    expect(await rig.sessionIds()).toEqual([]);
    await rig.untilNoServer();
    // The command ran in the server as far as its check (after its fingerprint matched), and gave its intent's droid up.
    const log = await serverLog(rig);
    expect(log).toContain(`command: ran a client's \`run\` here (exit ${handed.exitCode})`);
    expect(startedFor(log)).toHaveLength(1);
    expect(log).toContain(`intent: the agent of session ${startedFor(log)[0]} is discarded: its client gave it up`);
    const itself = await rig.run(args, { env: NOT_DELEGATED });
    expect(itself.exitCode).toBe(handed.exitCode);
    expect(itself.stderr).toBe(handed.stderr);
    await rig.untilNoServer();
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests.filter((r) => r.kind === 'step')).toEqual([]);
  });
});

describe('run handed to the orchestrator that is up', () => {
  it('prints what the command run by itself prints, exits the same, and leaves the client environment nowhere', async () => {
    const model = await rigs.model({ steps: [{ text: 'same answer' }, { text: 'same answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = await serve(rig);
    // A variable of the client's environment that One Works has no use for: it travels to the
    // orchestrator with the command, and must not be written anywhere.
    const secret = 'sk-delegated-client-only-4f1c2a';
    const handed = await rig.run(['run', '-w', rig.workspace, 'hello'], { env: { OW_TEST_CLIENT_SECRET: secret } });
    const itself = await rig.run(['run', '-w', rig.workspace, 'hello'], { env: { ...NOT_DELEGATED, OW_TEST_CLIENT_SECRET: secret } });
    expect(handed.exitCode, handed.stderr).toBe(0);
    expect(itself.exitCode, itself.stderr).toBe(0);
    expect(handed.stdout).toContain('same answer');
    expect(normalized(handed.stdout)).toBe(normalized(itself.stdout));
    expect(normalized(handed.stderr)).toBe(normalized(itself.stderr));
    // The first ran in the orchestrator, the second in its own process.
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
    expect(declined(server)).toBe(0);
    const ids = await rig.sessionIds();
    expect(ids).toHaveLength(2);
    for (const id of ids) expect((await rig.readSession(id)).runs.map((r) => r.status)).toEqual(['completed']);
    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
    expect(readAll(rig.stateDir)).not.toContain(secret);
    expect(handed.stdout + handed.stderr).not.toContain(secret);
    // The build's commands kept the config's parsed value for the next one (core/config/value-cache.ts),
    // without the API key the config writes out.
    const kept = readFileSync(join(ROOT, 'dist', 'cli', 'code-cache', `config-value-${hash53(rig.configPath).toString(36)}.json`), 'utf8');
    expect(kept).toContain(rig.workspace);
    expect(kept).not.toContain(RIG_API_KEY);
  });

  it('resolves a relative workspace and config against the client directory, and prints --json the same', async () => {
    const model = await rigs.model({ steps: [{ text: 'json answer' }, { text: 'json answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = await serve(rig);
    const below = join(rig.workspace, 'below');
    await mkdir(below);
    // From the rig's root: the config and the workspace are given relative to it.
    const relative = ['--config', 'one-works.yaml', '--json', 'run', '-w', join(basename(rig.workspace), 'below'), 'hello'];
    const handed = await startOneWorks(relative, { cwd: rig.root, env: { HOME: rig.userHome } }).result;
    const itself = await startOneWorks(relative, { cwd: rig.root, env: { HOME: rig.userHome, ...NOT_DELEGATED } }).result;
    expect(handed.exitCode, handed.stderr).toBe(0);
    expect(itself.exitCode, itself.stderr).toBe(0);
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
    const results = [handed, itself].map((r) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { type: string; sessionId: string });
    for (const result of results) {
      expect(result.type).toBe('result');
      expect((await rig.readSession(result.sessionId)).workspace).toBe(below);
    }
    // Each prints its session's recorded events as they were recorded, none left out (then the
    // result; the deltas are printed only), up to where the command stopped after the turn's end.
    const printed = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; seq?: number })
        .filter((event) => event.type !== 'assistant.delta' && event.type !== 'result')
        .map((event) => `${event.seq}:${event.type}`);
    for (const [i, run] of [handed, itself].entries()) {
      const shown = printed(run.stdout);
      const recorded = (await rig.readEvents(results[i]!.sessionId)).map((event) => `${event.seq}:${event.type}`);
      expect(shown.some((event) => event.endsWith(':turn.completed'))).toBe(true);
      expect(shown).toEqual(recorded.slice(0, shown.length));
    }
    // The same kinds of events: droid's working-state changes around the turn's end are counted
    // out, as droid orders its last one before or after the turn's completion from run to run.
    const kinds = (stdout: string): string[] =>
      stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type)
        .filter((type) => type !== 'working.changed')
        .sort();
    expect(kinds(handed.stdout)).toEqual(kinds(itself.stdout));
  });

  // The client of a handed run exits once the command is done and its output written (cli/bin.cjs
  // exitWhenWritten), not after a natural exit: an answer larger than a pipe holds, read late, arrives whole.
  it('an answer larger than a pipe holds reaches a reader that starts only after the command is done, whole', async () => {
    const answer = Array.from({ length: 5000 }, (_, i) => `line ${String(i).padStart(4, '0')} of a long answer`).join('\n');
    const model = await rigs.model({ steps: [{ text: answer }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = await serve(rig);
    const child = spawn(process.execPath, [ONE_WORKS_BIN, '--config', rig.configPath, 'run', '-w', rig.workspace, 'hello'], {
      cwd: rig.root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.resume();
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // Nothing is read until the orchestrator says the command is done: the client then holds the rest.
    child.stdout.pause();
    try {
      await handedOver(server, 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.stdout.resume();
      expect(await closed).toBe(0);
    } finally {
      // This test started the client itself: a failed wait leaves no client behind.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    expect(ranHere(server)).toBe(1);
    const output = Buffer.concat(chunks).toString('utf8');
    expect(output.length).toBeGreaterThan(128 * 1024);
    expect(output).toContain(answer);
    expect(output).toMatch(/session s-[0-9a-f]{10}: completed/);
  });

  it('a workspace outside the approved roots: the same refusal and exit code, and no session', async () => {
    const model = await rigs.model({ steps: [{ text: 'never' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = await serve(rig);
    const outside = join(rig.root, 'outside');
    await mkdir(outside);
    const handed = await rig.run(['run', '-w', outside, 'hello']);
    const itself = await rig.run(['run', '-w', outside, 'hello'], { env: NOT_DELEGATED });
    expect(handed.exitCode).toBe(exitCodeFor(ERROR_CODES.WORKSPACE_NOT_APPROVED));
    expect(handed.stderr).toContain('is not inside an approved root');
    expect(handed).toEqual(itself);
    expect(await rig.sessionIds()).toEqual([]);
    // The orchestrator ran it as far as the refusal, which came before the command reached it: the client said it.
    await handedOver(server, 1);
    expect(ranHere(server) + declined(server)).toBe(1);
    expect(model.requests).toHaveLength(0);
  });

  it('an orchestrator started with another config: declined, and the command refuses it itself with no turn run', async () => {
    const model = await rigs.model({ steps: [{ text: 'never' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = await serve(rig);
    // The file changes under the running server: its fingerprint is no longer the command's.
    await writeFile(rig.configPath, `${await readFile(rig.configPath, 'utf8')}defaults: { adapter: droid }\n`);
    const handed = await rig.run(['run', '-w', rig.workspace, 'hello']);
    expect(handed.exitCode).toBe(exitCodeFor(ERROR_CODES.ORCHESTRATOR_MISMATCH));
    expect(handed.stderr).toContain('runs with a different configuration or environment');
    await handedOver(server, 1);
    expect(declined(server)).toBe(1);
    expect(ranHere(server)).toBe(0);
    // The command told its own intent before it found the mismatch; the server discards that agent
    // and its directory (the config change, or the closed connection) without the command waiting:
    // no session stays (a test timeout fails the case), and none ever ran a turn.
    await until(async () => (await rig.sessionIds()).length === 0);
    expect(model.requests).toHaveLength(0);
    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
  });

  it('at a terminal that could show permission prompts the command loads itself; with --json (no prompts) it is handed over', async () => {
    const model = await rigs.model({ steps: [{ text: 'terminal answer' }, { text: 'terminal answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    // The server with the environment the terminal's commands get, so that their fingerprints match.
    const server = rig.start(['serve'], { env: await environmentInPty(rig) });
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    const prompting = await runInPty(rig, ['run', '-w', rig.workspace, 'hello'], []);
    expect(prompting.exitCode, prompting.screen).toBe(0);
    expect(prompting.screen).toContain('terminal answer');
    const json = await runInPty(rig, ['--json', 'run', '-w', rig.workspace, 'hello'], []);
    expect(json.exitCode, json.screen).toBe(0);
    expect(json.screen).toContain('"type":"result"');
    // The server logs a command before it answers it: once the second is logged, the first would be too.
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
    expect(declined(server)).toBe(0);
    expect((await rig.sessionIds()).length).toBe(2);
  });

  it('Ctrl-C is passed on: the turn is interrupted, the command exits 130, no droid is left', async () => {
    const { rig, server, cli, droid, others } = await runUntilTool('call_delegated_int_1', 'sleep 3041', 'never reached');
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    expect(result.stderr).toContain('interrupting the turn');
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'interrupted' });
    expect(await waitForExit([droid.pid], AGENT_CLOSE_MS)).toEqual([]);
    expect(await waitForNoProcesses(others, TOOL_LINGER_MS)).toEqual([]);
  });

  it('a second Ctrl-C exits 130 at once, before the turn settles; the orchestrator still ends the turn', async () => {
    const { rig, server, cli, droid, others } = await runUntilTool('call_delegated_int_2', 'sleep 3042', 'never reached');
    // A stopped droid cannot answer the interrupt: the turn cannot settle until it goes on.
    process.kill(droid.pid, 'SIGSTOP');
    try {
      cli.kill('SIGINT');
      // The first Ctrl-C reached the command in the orchestrator: it says so on the client's stderr.
      await until(() => cli.stderrSoFar().includes('interrupting the turn'));
      cli.kill('SIGINT');
      const result = await cli.result;
      expect(result.exitCode, result.stderr).toBe(130);
      // The client did not wait for the turn: it is not settled, and the command still runs in the orchestrator.
      const [id] = await rig.sessionIds();
      expect((await rig.readSession(id!)).runs[0]?.status).toBe('running');
      expect(ranHere(server)).toBe(0);
    } finally {
      // (Gone already when the rig's clean-up after a failure came first.)
      try {
        process.kill(droid.pid, 'SIGCONT');
      } catch {}
    }
    // The orchestrator ends the turn the first Ctrl-C interrupted, and closes the agent.
    const [id] = await rig.sessionIds();
    await until(async () => (await rig.readSession(id!)).runs[0]?.status === 'interrupted');
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
    expect(await waitForExit([droid.pid], AGENT_CLOSE_MS)).toEqual([]);
    expect(await waitForNoProcesses(others, TOOL_LINGER_MS)).toEqual([]);
  });

  it('a client that dies mid-turn leaves the turn to finish in the orchestrator', async () => {
    const { rig, server, cli } = await runUntilTool('call_delegated_kill_1', 'sleep 2.5', 'finished without its client');
    cli.kill('SIGKILL');
    await expect(cli.result).rejects.toThrow();
    const [id] = await rig.sessionIds();
    await until(async () => (await rig.readSession(id!)).runs[0]?.status === 'completed');
    const events = await rig.readEvents(id!);
    expect(events.some((e) => e.type === 'assistant.message' && e.text === 'finished without its client')).toBe(true);
    // It was the orchestrator's to run: the command it ran for the gone client ended with the turn.
    await handedOver(server, 1);
    expect(ranHere(server)).toBe(1);
  });
});
