import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { spawnAutoServer } from '../../cli/daemon/auto-start.js';
import { connectOrchestrator } from '../../cli/daemon/client.js';
import { logPath, socketPath } from '../../cli/daemon/wire.js';
import { ownerRecordOfThisProcess } from '../../core/store/index.js';
import { type DaemonCtx as Ctx, type DaemonRoot, useDaemonRoots } from '../support/daemon-roots.js';
import { ONE_WORKS_BIN } from '../support/one-works-cli.js';
import { findProcesses } from '../support/rig-processes.js';

// How a client waits for the server it auto-started (cli/daemon/client.ts), with real `serve --auto`
// processes in the states that made CI runs fail with "the orchestrator did not start within 10 s":
// a server slower to start than that, and one that left the state directory to an owner that
// serves nothing (exit 0).

const SLOW_START = fileURLToPath(new URL('../peers/slow-serve-start.cjs', import.meta.url));

const { clients, makeRoot: makeDaemonRoot } = useDaemonRoots('ow-daemon-wait-');

// A root whose state directory exists already (a test puts an owner.json in it before a server starts).
async function makeRoot(env: Record<string, string> = {}): Promise<DaemonRoot> {
  const made = await makeDaemonRoot({ idleExitMs: 500, env });
  await mkdir(made.ctx.stateDir, { mode: 0o700 });
  return made;
}

const serverPids = (root: string): number[] =>
  findProcesses(root)
    .filter((p) => / serve --auto$/.test(p.args))
    .map((p) => p.pid);

const logOf = (ctx: Ctx): Promise<string> => readFile(logPath(ctx.stateDir), 'utf8').catch(() => '');

describe('a client waiting for the server it started', () => {
  it('waits for a server that takes longer than 10 s to start while it runs, saying so every few seconds', async () => {
    const { root, ctx } = await makeRoot({ NODE_OPTIONS: `--require ${SLOW_START}`, OW_TEST_SERVE_HOLD_MS: '11000' });
    const said: string[] = [];
    const client = await connectOrchestrator({ ...ctx, out: { info: (text) => said.push(text) } }, { autoStart: true });
    clients.push(client);
    expect(await client.list()).toEqual([]);
    expect(await logOf(ctx)).toMatch(/^orchestrator serving /m);
    // Held 11 s: told after 3 s, then every 5 s (3, 8 and maybe 13 s on a slow machine), naming the server it waits for.
    const { pid } = await client.hello();
    expect(serverPids(root)).toEqual([pid]);
    const waiting = new RegExp(
      `^waiting for the background orchestrator \\(pid ${pid}\\) to start, (\\d+) s so far \\(its output: ${logPath(ctx.stateDir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`,
    );
    expect(said.length).toBeGreaterThanOrEqual(2);
    const seconds = said.map((line) => Number(waiting.exec(line)?.[1]));
    expect(seconds[0]).toBeGreaterThanOrEqual(3);
    expect(seconds[1]).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < seconds.length; i++) expect(seconds[i]! - seconds[i - 1]!).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('a command waiting for a slow server says so on stderr, never on stdout in --json mode', async () => {
    const { root, ctx } = await makeRoot({ NODE_OPTIONS: `--require ${SLOW_START}`, OW_TEST_SERVE_HOLD_MS: '5000' });
    // `sessions resolve` reaches the orchestrator (starting it) and fails on the unknown session once it serves.
    const result = await execa(process.execPath, [ONE_WORKS_BIN, '--config', ctx.configPath!, '--json', 'sessions', 'resolve', 'nope'], {
      cwd: root,
      env: ctx.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    const [pid] = serverPids(root);
    expect(pid).toBeTypeOf('number');
    expect(result.stderr).toMatch(new RegExp(`^waiting for the background orchestrator \\(pid ${pid}\\) to start, [3-9] s so far`, 'm'));
    expect(result.stderr).toMatch(/"code":"session_not_found"/);
    expect(result.stdout).not.toMatch(/waiting/);
  }, 60_000);

  it('fails, naming the server and its log, when a started server runs without serving past startDeadlineMs', async () => {
    const { root, ctx } = await makeRoot({ NODE_OPTIONS: `--require ${SLOW_START}`, OW_TEST_SERVE_HOLD_MS: '30000' });
    const error = await connectOrchestrator(ctx, { autoStart: true, startDeadlineMs: 1_000 }).catch((e: unknown) => e);
    const [pid] = serverPids(root);
    expect(pid).toBeTypeOf('number');
    expect(error).toMatchObject({ code: 'connection_closed' });
    expect((error as Error).message).toBe(
      `the orchestrator (pid ${pid}) started for ${ctx.stateDir} runs but did not serve within 1 s; see ${logPath(ctx.stateDir)}`,
    );
  }, 60_000);

  it('counts its deadline from the spawn of a server a `run` started and waited for before the command loaded', async () => {
    const { root, ctx } = await makeRoot({ NODE_OPTIONS: `--require ${SLOW_START}`, OW_TEST_SERVE_HOLD_MS: '30000' });
    const spawned = spawnAutoServer(ctx);
    // As if the early bundle had waited 59.5 s for it (cli/early-intent.ts): half a second is left, not another minute.
    const error = await connectOrchestrator(ctx, { autoStart: true, spawned: { ...spawned, startedAt: spawned.startedAt - 59_500 } }).catch(
      (e: unknown) => e,
    );
    expect(serverPids(root)).toEqual([spawned.pid]);
    expect(error).toMatchObject({ code: 'connection_closed' });
    expect((error as Error).message).toBe(
      `the orchestrator (pid ${spawned.pid}) started for ${ctx.stateDir} runs but did not serve within 60 s; see ${logPath(ctx.stateDir)}`,
    );
  }, 20_000);

  it('starts another server when the one it started left the state directory to an owner that serves nothing', async () => {
    const { root, ctx } = await makeRoot();
    // An owner that serves no socket (a command owning the state directory, an idle server between
    // removing its socket and releasing its lock): the started server waits for it, then exits 0.
    const owner = join(ctx.stateDir, 'owner.json');
    await writeFile(owner, JSON.stringify(ownerRecordOfThisProcess()), { mode: 0o600 });
    const connecting = connectOrchestrator(ctx, { autoStart: true });
    const [first] = await untilValue(
      () => serverPids(root),
      (pids) => pids.length > 0,
    );
    await untilValue(logOf.bind(undefined, ctx), (log) => log.includes('another orchestrator owns this state directory'));
    // That owner goes away after the server it started exited: only a new server can serve now.
    await untilValue(
      async () => existsSync(`/proc/${first}`),
      (alive) => !alive,
    );
    await rm(owner);
    const client = await connecting;
    clients.push(client);
    expect(await client.list()).toEqual([]);
    const hello = await client.hello();
    expect(hello.pid).not.toBe(first);
    const log = await logOf(ctx);
    expect(log.indexOf('another orchestrator owns this state directory')).toBeLessThan(log.indexOf('orchestrator serving'));
  }, 60_000);

  it('gives up after three servers that each left the state directory to an owner that serves nothing, naming them', async () => {
    const { ctx } = await makeRoot();
    await writeFile(join(ctx.stateDir, 'owner.json'), JSON.stringify(ownerRecordOfThisProcess()), { mode: 0o600 });
    const error = await connectOrchestrator(ctx, { autoStart: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'orchestrator_unavailable', data: { exitCode: 0 } });
    expect((error as Error).message).toContain(
      `the 3 orchestrators started one after the other for ${ctx.stateDir} left it to another owner`,
    );
    expect((error as Error).message).toContain('another orchestrator owns this state directory; leaving it to that one');
    expect((await logOf(ctx)).match(/another orchestrator owns this state directory/g)).toHaveLength(3);
    expect(existsSync(socketPath(ctx.stateDir))).toBe(false);
  }, 90_000);
});

// Polls `read` every 20 ms until `done` holds for its value; returns that value (a test timeout ends it).
async function untilValue<T>(read: () => T | Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await sleep(20);
  }
}
