import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, type CliSandbox, ONE_WORKS_BIN, createCliSandbox } from '../support/cli-runner.js';
import { sql, startTestPostgres, type TestPostgres } from '../support/embedded-postgres.js';
import { fleetStateYaml, startWorker, type TestWorker, until } from '../support/fleet-cli-rig.js';
import { findProcesses, waitForNoProcesses } from '../support/rig-processes.js';

// `sessions reconcile` and `sessions resolve` on a fleet (issue 16): a real worker process is
// killed (kill -9) mid-turn, its live turn becomes unknown and its session needs a person; the
// client's `sessions reconcile` waits for the lost worker (and says so), the restarted worker's
// orchestrator records the verdict, and the session takes a new turn. The client never writes
// the record itself: the worker holding the session does, FIFO with its other requests.

let server: TestPostgres;
let url: string;
let box: CliSandbox;
let root: string;
const outputs: CliRun[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
  url = await server.createDatabase();
  box = await createCliSandbox({ prefix: 'ow-fleetr-' });
  root = join(box.root, 'ws');
  await mkdir(join(root, 'x'), { recursive: true });
  await box.writeConfig(`${fleetStateYaml(join(box.root, 'client-state'))}\n`);
}, 180_000);

afterAll(async () => {
  await server?.dispose();
  await box?.remove();
}, 60_000);

async function cli(args: string[]): Promise<CliRun> {
  const run = await box.run(args, { OW_TEST_DATABASE_URL: url });
  outputs.push(run);
  return run;
}

function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  return sql<R>(url, text, values);
}

const lastJson = <T>(run: CliRun): T => JSON.parse(run.stdout.split('\n').filter(Boolean).at(-1)!) as T;

describe('fleet: sessions reconcile and resolve from a client', () => {
  it('kill -9 mid-turn, restart: reconcile from the client waits for the lost worker, the run reads the verdict, send runs again', async () => {
    const options = { dir: join(box.root, 'w'), roots: [root], maxConcurrentRuns: 1, url, orchestrator: ['workerLeaseMs: 4000'] };
    const w = await startWorker('w', options);
    let restarted: TestWorker | undefined;
    try {
      const submitted = await cli(['submit', 'sleep 120000 a long turn', '-A', 'process:echo', '-w', join(root, 'x'), '--json']);
      expect(submitted.exitCode, submitted.stderr).toBe(0);
      const id = (JSON.parse(submitted.stdout) as { sessionId: string }).sessionId;
      await until(async () => {
        const runs = await query<{ status: string }>('SELECT status FROM runs WHERE session_id = $1', [id]);
        return runs[0]?.status === 'running' ? true : undefined;
      }, 'the turn to run');

      // Before the loss, reconciling a live run is the worker's refusal, not the client's guess.
      const early = await cli(['sessions', 'reconcile', id, 'r1', '--status', 'completed']);
      expect(early.exitCode).not.toBe(0);
      expect(early.stderr).toContain(`run r1 of session ${id} is still queued or running`);

      process.kill(w.pid, 'SIGKILL');
      await w.stop();
      await until(async () => {
        const fleet = lastJson<{ workers: Array<{ name: string; alive: boolean }> }>(await cli(['fleet', '--json']));
        return fleet.workers.find((x) => x.name === 'w')?.alive === false ? true : undefined;
      }, 'the worker to read lost');

      // A person clears the attention first, then reconciles: both wait for w, which holds the
      // session (FIFO, in this order); the reconcile says so.
      const env = { ...box.env, OW_TEST_DATABASE_URL: url };
      const resolving = execa(process.execPath, [ONE_WORKS_BIN, 'sessions', 'resolve', id, '--note', 'looked at it', '--json'], {
        cwd: box.cwd,
        env,
        extendEnv: false,
        reject: false,
      });
      await until(
        async () => ((await query("SELECT 1 FROM queue WHERE session_id = $1 AND op = 'resolve'", [id])).length > 0 ? true : undefined),
        'the resolve to be queued',
      );
      const reconciling = execa(
        process.execPath,
        [ONE_WORKS_BIN, 'sessions', 'reconcile', id, 'r1', '--status', 'interrupted', '--note', 'killed with its worker', '--json'],
        { cwd: box.cwd, env, extendEnv: false, reject: false },
      );
      let said = '';
      reconciling.stderr?.on('data', (chunk: Buffer) => {
        said += chunk.toString('utf8');
      });
      await until(
        async () => (said.includes(`session ${id}: waiting for worker w, which holds it and was lost`) ? true : undefined),
        'reconcile to say it waits for the lost worker',
        30_000,
      );
      // Nothing was written by the client: the run is still as the dead worker left it.
      expect(await query('SELECT status FROM runs WHERE session_id = $1', [id])).toEqual([{ status: 'running' }]);

      // w back under its name: it recovers the run as unknown, then does the reconcile.
      restarted = await startWorker('w', options);
      const resolved = await resolving;
      expect(resolved.exitCode, resolved.stderr).toBe(0);
      expect(JSON.parse(resolved.stdout.split('\n').filter(Boolean).at(-1)!)).toMatchObject({ sessionId: id });
      const reconciled = await reconciling;
      expect(reconciled.exitCode, reconciled.stderr).toBe(0);
      expect(JSON.parse(reconciled.stdout.split('\n').filter(Boolean).at(-1)!)).toEqual({
        sessionId: id,
        runId: 'r1',
        status: 'interrupted',
        sessionState: 'idle',
      });
      const shown = lastJson<{ runs: Array<{ id: string; status: string; reason?: string }> }>(
        await cli(['sessions', 'show', id, '--json']),
      );
      expect(shown.runs.map((r) => [r.id, r.status, r.reason])).toEqual([['r1', 'interrupted', 'reconciled']]);
      const events = await query<{ type: string; status: string | null; previous: string | null; note: string; cleared: number | null }>(
        `SELECT event->>'type' AS type, event->>'status' AS status, event->'previous'->>'status' AS previous, event->>'note' AS note,
           json_array_length(event->'cleared') AS cleared
         FROM events WHERE session_id = $1 AND event->>'type' IN ('run.reconciled', 'attention.resolved') ORDER BY seq`,
        [id],
      );
      expect(events).toEqual([
        { type: 'attention.resolved', status: null, previous: null, note: 'looked at it', cleared: expect.any(Number) },
        { type: 'run.reconciled', status: 'interrupted', previous: 'unknown', note: 'killed with its worker', cleared: null },
      ]);
      expect(events[0]!.cleared).toBeGreaterThan(0);

      // A second verdict on the same run is refused by the worker (a recorded outcome is never rewritten).
      const again = await cli(['sessions', 'reconcile', id, 'r1', '--status', 'completed']);
      expect(again.exitCode).not.toBe(0);
      expect(again.stderr).toContain(`run r1 of session ${id} is interrupted (reconciled), not unknown`);
      // resolve on a session that needs no attention: the worker's refusal too.
      const resolveIdle = await cli(['sessions', 'resolve', id]);
      expect(resolveIdle.exitCode).not.toBe(0);
      expect(resolveIdle.stderr).toContain(`session ${id} does not need attention (it is idle)`);

      // The session goes on.
      const sent = await cli(['send', id, 'after the verdict']);
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(sent.stdout).toContain('echo: after the verdict');
      const runs = await query<{ id: string; status: string }>('SELECT id, status FROM runs WHERE session_id = $1 ORDER BY ordinal', [id]);
      expect(runs).toEqual([
        { id: 'r1', status: 'interrupted' },
        { id: 'r2', status: 'completed' },
      ]);
    } finally {
      expect(await restarted?.stop()).toBe(0);
    }
    // The killed worker's agent was stopped by its restarted worker; nothing of the worker is left.
    expect(await waitForNoProcesses(() => findProcesses(options.dir), 15_000)).toEqual([]);
    for (const run of outputs) expect(`${run.stdout}${run.stderr}`).not.toContain(server.password);
  }, 180_000);
});
