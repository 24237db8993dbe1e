import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awaitAccepted, requestCancel, submitCreate } from '../../core/fleet/fleet-queue.js';
import type { TestPostgres } from '../support/embedded-postgres.js';
import { FleetRig, fleetServer, maxOverlap } from '../support/fleet-rig.js';

// The fleet end to end: two `serve --worker` processes (two state dirs, one PostgreSQL), a real
// process runner as the agent. 200 turns over 40 sessions: every turn runs exactly once, the
// per-worker and fleet limits hold (the runner's own start/end times), FIFO per session, and
// the workspace lock across the fleet.

let server: TestPostgres;
const rigs: FleetRig[] = [];

beforeAll(async () => {
  server = await fleetServer();
}, 120_000);

afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.dispose();
});

afterAll(async () => {
  await server?.dispose();
});

const SESSIONS = 40;
const TURNS_PER_SESSION = 5;

describe('fleet dispatch', () => {
  it('200 turns across 40 sessions on two workers: each exactly once, FIFO per session, worker and fleet limits kept', async () => {
    const rig = await FleetRig.create(server);
    rigs.push(rig);
    const [a, b] = await Promise.all([
      rig.startWorker('w-a', { maxConcurrentRuns: 3, fleetMaxConcurrentRuns: 4 }),
      rig.startWorker('w-b', { maxConcurrentRuns: 2, fleetMaxConcurrentRuns: 4 }),
    ]);
    const store = await rig.store();
    // Submitted interleaved across sessions, as many clients would.
    const sessions: string[] = [];
    const submitted = new Map<string, string[]>();
    let n = 0;
    // Ten sessions in each of four workspaces, wherever they land: the workspace lock holds across the fleet.
    const workspaceOf = new Map<string, string>();
    for (let s = 0; s < SESSIONS; s++) {
      const token = `t-${n++}`;
      const workspace = join(rig.workspace, `p${s % 4}`);
      await mkdir(workspace, { recursive: true });
      const { sessionId } = await rig.create(store, `${token} sleep:${20 + (s % 4) * 10}`, workspace);
      workspaceOf.set(sessionId, workspace);
      sessions.push(sessionId);
      submitted.set(sessionId, [token]);
    }
    for (let turn = 1; turn < TURNS_PER_SESSION; turn++) {
      for (const sessionId of sessions) {
        const token = `t-${n++}`;
        await rig.send(store, sessionId, `${token} sleep:${10 + (n % 5) * 10}`);
        submitted.get(sessionId)?.push(token);
      }
    }
    expect(n).toBe(200);
    expect(await rig.drained(150_000), `${a.stderr()}\n${b.stderr()}`).toBe(0);

    // Every request accepted by a worker (a handle, no error) and done.
    const requests = await rig.sql<{
      id: string;
      session_id: string;
      worker: string;
      state: string;
      run_id: string;
      result: { handle?: unknown };
    }>('SELECT id, session_id, worker, state, run_id, result FROM queue ORDER BY id');
    expect(requests).toHaveLength(200);
    expect(requests.filter((r) => r.state === 'done' && r.result.handle !== undefined)).toHaveLength(200);
    const workerOf = new Map(requests.map((r) => [r.session_id, r.worker]));
    // A session's turns all ran on the worker holding its HOME; both workers took part.
    for (const r of requests) expect(r.worker).toBe(workerOf.get(r.session_id));
    expect(new Set(requests.map((r) => r.worker))).toEqual(new Set(['w-a', 'w-b']));

    // The records: each session's runs are its submitted turns, in submission order, each completed once.
    const runs = await rig.sql<{ session_id: string; ordinal: number; id: string; status: string; prompt: string }>(
      "SELECT session_id, ordinal, id, status, record->>'prompt' AS prompt FROM runs ORDER BY session_id, ordinal",
    );
    expect(runs).toHaveLength(200);
    const tokens = runs.map((run) => /t-\d+/.exec(run.prompt)?.[0]);
    expect(new Set(tokens).size).toBe(200);
    for (const sessionId of sessions) {
      const own = runs.filter((run) => run.session_id === sessionId);
      expect(own.map((run) => /t-\d+/.exec(run.prompt)?.[0])).toEqual(submitted.get(sessionId));
      expect(own.every((run) => run.status === 'completed')).toBe(true);
    }

    // The agent's own ledger: each turn started and ended exactly once.
    const ledger = await rig.ledger();
    const starts = ledger.filter((line) => line.what === 'start');
    const ends = ledger.filter((line) => line.what === 'end');
    expect(starts).toHaveLength(200);
    expect(new Set(starts.map((line) => line.token)).size).toBe(200);
    expect(new Set(ends.map((line) => line.token))).toEqual(new Set(starts.map((line) => line.token)));
    // FIFO per session, by the agent's clock: each turn started after the previous one ended.
    const at = (token: string, what: string): number => ledger.find((line) => line.token === token && line.what === what)!.at;
    for (const order of submitted.values()) {
      for (let i = 1; i < order.length; i++) expect(at(order[i]!, 'start')).toBeGreaterThanOrEqual(at(order[i - 1]!, 'end'));
    }
    // Limits, from the agent's start/end times: 3 on w-a, 2 on w-b, 4 across the fleet.
    const sessionOfToken = new Map<string, string>();
    for (const [sessionId, order] of submitted) for (const token of order) sessionOfToken.set(token, sessionId);
    const interval = (token: string) => ({ start: at(token, 'start'), end: at(token, 'end') });
    const onWorker = (worker: string) =>
      [...sessionOfToken].filter(([, s]) => workerOf.get(s) === worker).map(([token]) => interval(token));
    expect(maxOverlap(onWorker('w-a'))).toBeLessThanOrEqual(3);
    expect(maxOverlap(onWorker('w-b'))).toBeLessThanOrEqual(2);
    const fleet = maxOverlap([...sessionOfToken.keys()].map(interval));
    expect(fleet).toBeLessThanOrEqual(4);
    expect(fleet).toBeGreaterThan(1);
    // The workspace lock (autonomy low: every turn a writer): never two turns at once in one
    // workspace, though its sessions may be held by different workers.
    for (const workspace of new Set(workspaceOf.values())) {
      const inside = [...sessionOfToken].filter(([, s]) => workspaceOf.get(s) === workspace).map(([token]) => interval(token));
      expect(maxOverlap(inside), workspace).toBe(1);
    }
    expect(a.stderr()).not.toContain(rig.url);
    expect(b.stderr()).not.toContain(rig.url);
  }, 240_000);

  it("cancel: the holding worker interrupts the live turn at a client's request; queued turns are dropped unrun; a refused create carries the orchestrator's error", async () => {
    const rig = await FleetRig.create(server);
    rigs.push(rig);
    await rig.startWorker('w-a', { maxConcurrentRuns: 2 });
    const store = await rig.store();
    const x = await rig.create(store, 't-1 sleep:60000');
    await rig.accepted(store, x.requestId);
    const queued = await rig.send(store, x.sessionId, 't-2 sleep:10');
    for (;;) {
      if ((await rig.ledger()).some((l) => l.token === 't-1' && l.what === 'start')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await requestCancel(store, x.sessionId, undefined, 30_000);
    expect(await rig.sql('SELECT id, state FROM queue ORDER BY id')).toEqual([
      { id: String(x.requestId), state: 'done' },
      { id: String(queued.requestId), state: 'cancelled' },
    ]);
    await expect(awaitAccepted(store, queued.requestId)).rejects.toMatchObject({ code: 'request_cancelled' });
    expect((await store.readSession(x.sessionId)).runs.map((run) => run.status)).toEqual(['interrupted']);
    expect((await rig.ledger()).map((l) => `${l.token} ${l.what}`)).toEqual(['t-1 start', 't-1 interrupted']);
    // A create no worker's orchestrator accepts (an adapter the config does not have) fails with its error.
    const bad = (await submitCreate(store, { adapter: 'nope', workspace: rig.workspace, prompt: 't-9' })).requestId;
    await expect(awaitAccepted(store, bad)).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('nope') });
  }, 120_000);
});
