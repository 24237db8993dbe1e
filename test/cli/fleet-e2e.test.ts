import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, type CliSandbox, ONE_WORKS_BIN, createCliSandbox } from '../support/cli-runner.js';
import { sql, startTestPostgres, type TestPostgres } from '../support/embedded-postgres.js';
import { fleetStateYaml, startWorker, type TestWorker, until } from '../support/fleet-cli-rig.js';

// The fleet end to end: two real `one-works serve --worker` processes (each with its own config,
// state directory and maxConcurrentRuns) on one real PostgreSQL, a real process-runner agent
// (`process:echo`, test/peers/echo-runner.mjs), and the real client commands from a client
// whose config sets only the state backend: run, submit, send, send-queued, sessions,
// events --follow, wait, cancel, fleet, and the MCP server. The database password appears in no
// client output.

let server: TestPostgres;
let url: string;
let box: CliSandbox;
let workspaces: string;
const workers: TestWorker[] = [];
const outputs: CliRun[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
  box = await createCliSandbox({ prefix: 'ow-fleet-' });
  workspaces = join(box.root, 'ws');
  for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'mcp']) await mkdir(join(workspaces, name), { recursive: true });
  await box.writeConfig(`${fleetStateYaml(join(box.root, 'client-state'))}\n`);
  for (const name of ['w1', 'w2']) {
    workers.push(await startWorker(name, { dir: join(box.root, name), roots: [workspaces], maxConcurrentRuns: 2, url }));
  }
}, 180_000);

afterAll(async () => {
  const codes = await Promise.all(workers.map((w) => w.stop()));
  await server?.dispose();
  await box?.remove();
  expect(codes).toEqual(workers.map(() => 0));
}, 60_000);

async function cli(args: string[]): Promise<CliRun> {
  const run = await box.run(args, { OW_TEST_DATABASE_URL: url });
  outputs.push(run);
  return run;
}

function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  return sql<R>(url, text, values);
}

interface Row {
  sessionId: string;
  status: string;
  runs: number;
  lastRun: { id: string; status: string } | null;
}

const rows = (run: CliRun): Row[] =>
  run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);

describe('a two-worker fleet through the real client commands', { timeout: 240_000 }, () => {
  it('run, submit, send, send-queued, events --follow, wait, cancel, sessions and fleet', async () => {
    // run: a new session, followed to its outcome on whichever worker took it.
    const first = await cli(['run', 'hello fleet', '-A', 'process:echo', '-w', join(workspaces, 'a'), '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout.split('\n').filter(Boolean).at(-1)!) as {
      sessionId: string;
      outcome: { status: string; text: string };
    };
    expect(result.outcome).toMatchObject({ status: 'completed', text: expect.stringMatching(/^echo: hello fleet \(pid \d+\)$/) });
    const a = result.sessionId;

    // submit: four sessions at once, each a 1.5 s turn; two workers of two runs each share them.
    const submitted = await Promise.all(
      ['b', 'c', 'd', 'e'].map((name) =>
        cli(['submit', `sleep 1500 job ${name}`, '-A', 'process:echo', '-w', join(workspaces, name), '--json']),
      ),
    );
    const ids = submitted.map((run) => {
      expect(run.exitCode, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { sessionId: string }).sessionId;
    });
    const waited = await cli(['wait', ...ids, '--json']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    const settled = JSON.parse(waited.stdout) as {
      timedOut: boolean;
      settled: Array<{ sessionId: string; state: string; latestRun: { status: string } }>;
    };
    expect(settled.timedOut).toBe(false);
    expect(settled.settled.map((s) => [s.sessionId, s.state, s.latestRun.status]).sort()).toEqual(
      ids.map((id) => [id, 'idle', 'completed']).sort(),
    );
    const homes = await query<{ session_id: string; worker: string }>('SELECT session_id, worker FROM session_homes');
    const holders = new Map(homes.map((h) => [h.session_id, h.worker]));
    // No worker runs more than two at once, so four overlapping turns used both.
    expect(new Set(ids.map((id) => holders.get(id)))).toEqual(new Set(['w1', 'w2']));

    // send: the next turn goes to the worker holding the session's HOME, which resumes its native state.
    const second = await cli(['send', a, 'second turn', '--json']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.split('\n').filter(Boolean).at(-1)!)).toMatchObject({
      sessionId: a,
      outcome: { status: 'completed', text: expect.stringContaining('echo: second turn') },
    });
    expect((await query('SELECT worker FROM session_homes WHERE session_id = $1', [a]))[0]).toEqual({ worker: holders.get(a) });

    // events --follow: what is recorded, then the events of a turn queued meanwhile, in order, no gap.
    const follower = execa(process.execPath, [ONE_WORKS_BIN, 'events', a, '--follow', '--json'], {
      cwd: box.cwd,
      env: { ...box.env, OW_TEST_DATABASE_URL: url },
      extendEnv: false,
      reject: false,
    });
    let followed = '';
    follower.stdout?.on('data', (chunk: Buffer) => {
      followed += chunk.toString('utf8');
    });
    await until(async () => (followed.includes('"turn.completed"') ? true : undefined), 'the follower to print the recorded events');
    const queued = await cli(['send-queued', a, 'sleep 300 third turn', '--json']);
    expect(queued.exitCode, queued.stderr).toBe(0);
    const third = JSON.parse(queued.stdout) as { runId: string };
    await until(
      async () => (followed.split('"turn.completed"').length - 1 >= 3 ? true : undefined),
      'the third turn to complete in the follow',
    );
    follower.kill('SIGINT');
    const ended = await follower;
    // Ctrl-C ends a follow as it ends any command: exit 130 (interrupted).
    expect(ended.exitCode).toBe(130);
    const events = followed
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { seq: number; type: string; runId?: string });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'turn.completed' && e.runId === third.runId)).toHaveLength(1);
    const recorded = await cli(['events', a, '--json']);
    expect(recorded.stdout.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(events.length);

    // cancel: a long turn, cancelled while it runs on its worker, ends interrupted long before its 60 s.
    const long = await cli(['submit', 'sleep 60000 long job', '-A', 'process:echo', '-w', join(workspaces, 'f'), '--json']);
    const longId = (JSON.parse(long.stdout) as { sessionId: string }).sessionId;
    await until(async () => {
      const listed = rows(await cli(['sessions', '--json'])).find((r) => r.sessionId === longId);
      return listed?.lastRun?.status === 'running' ? true : undefined;
    }, 'the long turn to run');
    const started = Date.now();
    const cancelled = await cli(['cancel', longId, '--json']);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    const after = rows(await cli(['sessions', '--json'])).find((r) => r.sessionId === longId);
    expect(after?.lastRun?.status).toMatch(/^(interrupted|cancelled)$/);

    // Ctrl-C on run: the turn is cancelled on its worker, and run exits 130 with the outcome.
    const interrupted = execa(
      process.execPath,
      [ONE_WORKS_BIN, 'run', 'sleep 60000 interrupted job', '-A', 'process:echo', '-w', join(workspaces, 'f'), '--json'],
      {
        cwd: box.cwd,
        env: { ...box.env, OW_TEST_DATABASE_URL: url },
        extendEnv: false,
        reject: false,
      },
    );
    let shownSoFar = '';
    interrupted.stdout?.on('data', (chunk: Buffer) => {
      shownSoFar += chunk.toString('utf8');
    });
    await until(async () => (shownSoFar.includes('"turn.started"') ? true : undefined), 'the interrupted run to start');
    interrupted.kill('SIGINT');
    const stopped = await interrupted;
    expect(stopped.exitCode, stopped.stderr).toBe(130);
    const outcome = JSON.parse(stopped.stdout.split('\n').filter(Boolean).at(-1)!) as { sessionId: string; outcome: { status: string } };
    expect(outcome.outcome.status).toBe('interrupted');
    expect(stopped.stdout + stopped.stderr).not.toContain(server.password);

    // sessions: every session, idle; fleet: both workers alive, nothing queued or running.
    const listed = rows(await cli(['sessions', '--json']));
    expect(listed.map((r) => r.sessionId).sort()).toEqual([a, ...ids, longId, outcome.sessionId].sort());
    expect(listed.find((r) => r.sessionId === a)).toMatchObject({
      status: 'idle',
      runs: 3,
      lastRun: { id: third.runId, status: 'completed' },
    });
    const shown = await cli(['sessions', 'show', a]);
    expect(shown.stdout).toContain(`  record:    127.0.0.1:${server.port}/${url.split('/').pop()} (sessions, id ${a})`);
    expect(shown.stdout).toMatch(/^ {4}r\d+ {2}completed .*\n {6}> sleep 300 third turn$/m);
    const fleet = await cli(['fleet', '--json']);
    expect(fleet.exitCode, fleet.stderr).toBe(0);
    const status = JSON.parse(fleet.stdout) as {
      workers: Array<{ name: string; alive: boolean; live: number; maxConcurrentRuns: number; approvedRoots: string[] }>;
      queue: { queued: number; claimed: number };
    };
    expect(status.workers).toMatchObject([
      { name: 'w1', alive: true, live: 0, maxConcurrentRuns: 2, approvedRoots: [workspaces] },
      { name: 'w2', alive: true, live: 0, maxConcurrentRuns: 2, approvedRoots: [workspaces] },
    ]);
    expect(status.queue).toMatchObject({ queued: 0, claimed: 0 });
    const text = await cli(['fleet']);
    expect(text.stdout).toMatch(/^ {2}w1 +\S+ pid \d+ {2}alive, lease until /m);

    // Every turn ran exactly once: one run record per request, each completed or cancelled as above.
    const runs = await query<{ n: string }>("SELECT count(*) AS n FROM runs WHERE status = 'completed'");
    expect(Number(runs[0]?.n)).toBe(1 + 4 + 2);
    for (const run of outputs) expect(run.stdout + run.stderr).not.toContain(server.password);
    expect(ended.stdout + ended.stderr).not.toContain(server.password);
  });

  it('the MCP server over the fleet: create_session, wait_for_sessions, send_message, read_session', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, 'mcp'],
      cwd: box.cwd,
      env: { ...box.env, OW_TEST_DATABASE_URL: url },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new McpClient({ name: 'fleet-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
        const result = await client.callTool({ name, arguments: args });
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
        return result.structuredContent as T;
      };
      const handle = await call<{ sessionId: string; runId: string }>('create_session', {
        adapter: 'process:echo',
        workspace: join(workspaces, 'mcp'),
        prompt: 'hello over mcp',
      });
      const waited = await call<{ timedOut: boolean; settled: Array<{ sessionId: string }> }>('wait_for_sessions', {
        sessions: [handle.sessionId],
        timeoutSeconds: 30,
      });
      expect(waited).toMatchObject({ timedOut: false, settled: [{ sessionId: handle.sessionId }] });
      const next = await call<{ sessionId: string; runId: string }>('send_message', {
        session: handle.sessionId,
        prompt: 'again over mcp',
      });
      expect(next.runId).not.toBe(handle.runId);
      await call('wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 30 });
      const read = await call<{ latestRun: { runId: string; status: string; text: string }; events: Array<{ type: string }> }>(
        'read_session',
        {
          session: handle.sessionId,
        },
      );
      expect(read.latestRun).toMatchObject({
        runId: next.runId,
        status: 'completed',
        text: expect.stringContaining('echo: again over mcp'),
      });
      expect(read.events.filter((e) => e.type === 'turn.completed')).toHaveLength(2);
      // The fleet as one orchestrator: its live workers' roots and summed capacity.
      const workspacesInfo = await call<{ approvedRoots: string[]; capacity: { limits: { maxConcurrentRuns: number } } }>(
        'list_workspaces',
        {},
      );
      expect(workspacesInfo).toMatchObject({ approvedRoots: [workspaces], capacity: { limits: { maxConcurrentRuns: 4 } } });
      // A tool that needs a host says so.
      const refused = await client.callTool({ name: 'list_asks', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('not available with state.backend postgres');
    } finally {
      await client.close();
    }
    expect(stderr).not.toContain(server.password);
  });

  it('a session whose worker is lost waits (worker_lost in sessions and fleet) and runs once the worker is back', async () => {
    const root = join(box.root, 'lost-ws');
    await mkdir(join(root, 'x'), { recursive: true });
    const options = { dir: join(box.root, 'w3'), roots: [root], maxConcurrentRuns: 1, url, orchestrator: ['workerLeaseMs: 6000'] };
    const w3 = await startWorker('w3', options);
    let restarted: TestWorker | undefined;
    try {
      const first = await cli(['submit', 'before the loss', '-A', 'process:echo', '-w', join(root, 'x'), '--json']);
      const id = (JSON.parse(first.stdout) as { sessionId: string }).sessionId;
      expect((await cli(['wait', id])).exitCode).toBe(0);
      process.kill(w3.pid, 'SIGKILL');
      await w3.stop();

      // The next turn waits for w3, which holds the session's HOME: nobody else takes it.
      // send-queued does not wait for the lost worker: it says the turn is queued.
      const pending = await cli(['send-queued', id, 'after the loss', '--json']);
      expect(pending.exitCode, pending.stderr).toBe(0);
      expect(JSON.parse(pending.stdout)).toMatchObject({ sessionId: id, state: 'queued' });
      expect(pending.stderr).toContain(`the turn of session ${id} is queued in the fleet`);
      const row = await until(async () => {
        const found = rows(await cli(['sessions', '--json'])).find((r) => r.sessionId === id);
        return found?.status === 'worker_lost' ? found : undefined;
      }, 'the session to read worker_lost');
      expect(row).toMatchObject({ worker: 'w3', runs: 1 });
      const fleet = JSON.parse((await cli(['fleet', '--json'])).stdout) as {
        workers: Array<{ name: string; alive: boolean }>;
        waitingOnLostWorkers: Array<{ sessionId: string; worker: string }>;
      };
      expect(fleet.workers.find((w) => w.name === 'w3')).toMatchObject({ alive: false });
      expect(fleet.waitingOnLostWorkers).toEqual([expect.objectContaining({ sessionId: id, worker: 'w3', reason: 'worker_lost' })]);
      expect((await cli(['fleet'])).stdout).toContain(`${id}  worker_lost: request`);

      // send says when its turn waits for a worker.
      const waiting = execa(process.execPath, [ONE_WORKS_BIN, 'send', id, 'run while lost'], {
        cwd: box.cwd,
        env: { ...box.env, OW_TEST_DATABASE_URL: url },
        extendEnv: false,
        reject: false,
      });
      let said = '';
      waiting.stderr?.on('data', (chunk: Buffer) => {
        said += chunk.toString('utf8');
      });
      await until(
        async () => (said.includes(`session ${id}: queued in the fleet, waiting for a worker`) ? true : undefined),
        'send to say it waits',
      );

      // w3 back under its name: the waiting turns run there, once each, in order.
      restarted = await startWorker('w3', options);
      const followed = await waiting;
      expect(followed.exitCode, followed.stderr).toBe(0);
      expect(followed.stdout).toContain('echo: run while lost');
      expect((await cli(['wait', id])).exitCode).toBe(0);
      const after = rows(await cli(['sessions', '--json'])).find((r) => r.sessionId === id);
      expect(after).toMatchObject({ status: 'idle', runs: 3, lastRun: { status: 'completed' } });
      const runs = await query<{ id: string; prompt: string }>(
        "SELECT id, record->>'prompt' AS prompt FROM runs WHERE session_id = $1 ORDER BY ordinal",
        [id],
      );
      expect(runs.map((r) => r.prompt)).toEqual(['before the loss', 'after the loss', 'run while lost']);
    } finally {
      await restarted?.stop();
    }
  });
});
