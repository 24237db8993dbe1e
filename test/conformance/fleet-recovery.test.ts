import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fleetStatus } from '../../core/fleet/fleet-queue.js';
import type { TestPostgres } from '../support/embedded-postgres.js';
import { FleetRig, fleetServer } from '../support/fleet-rig.js';
import { findProcesses, waitForNoProcesses } from '../support/rig-processes.js';

// A fleet worker that dies (kill -9) or is stopped (SIGTERM): never replayed, recorded unknown,
// the other worker unaffected, the restarted worker recovers its sessions; and a database
// restarted under load: workers reconnect, nothing lost or duplicated.

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

async function newRig(): Promise<FleetRig> {
  const rig = await FleetRig.create(server);
  rigs.push(rig);
  return rig;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Row {
  id: string;
  session_id: string;
  state: string;
  worker: string | null;
  result: { handle?: { runId: string }; error?: { code: string; message: string } } | null;
}

describe('fleet: a worker lost and restarted', () => {
  it('kill -9 mid-turn: its live turn unknown, its queued turns wait, the other worker goes on; restarted, it recovers and runs the waiting turns', async () => {
    const rig = await newRig();
    const [wsA, wsB] = [join(rig.root, 'ws-a'), join(rig.root, 'ws-b')];
    await Promise.all([mkdir(wsA), mkdir(wsB)]);
    const a = await rig.startWorker('w-a', { approved: [wsA], maxConcurrentRuns: 1, workerLeaseMs: 3000 });
    await rig.startWorker('w-b', { approved: [wsB], maxConcurrentRuns: 2, workerLeaseMs: 3000 });
    const store = await rig.store();
    const rows = (): Promise<Row[]> => rig.sql<Row>('SELECT id, session_id, state, worker, result FROM queue ORDER BY id');
    const stateOf = async (requestId: number): Promise<string | undefined> => (await rows()).find((r) => r.id === String(requestId))?.state;

    // Y: a session of w-a that is idle when w-a dies; X: one whose turn is live then.
    const y = await rig.create(store, 't-1 sleep:10', wsA);
    await until('Y done', async () => ((await stateOf(y.requestId)) === 'done' ? true : undefined));
    // t-2's agent outlives its worker (it ignores the end of its stdin), as real agents may.
    const x = await rig.create(store, 't-2 sleep:60000 linger', wsA);
    await rig.accepted(store, x.requestId);
    await until('t-2 started', async () => ((await rig.ledger()).some((l) => l.token === 't-2' && l.what === 'start') ? true : undefined));
    const waiting = [
      await rig.send(store, x.sessionId, 't-3 sleep:10'),
      await rig.send(store, x.sessionId, 't-4 sleep:10'),
      await rig.send(store, y.sessionId, 't-5 sleep:10'),
      await rig.send(store, y.sessionId, 't-6 sleep:10'),
    ];
    // Z on w-b, running through the loss of w-a.
    const z = await rig.create(store, 't-10 sleep:150', wsB);
    const zTurns = [z];
    for (let i = 11; i <= 16; i++) zTurns.push(await rig.send(store, z.sessionId, `t-${i} sleep:150`));

    process.kill(a.pid, 'SIGKILL');
    await a.exited;
    // w-b expires w-a's lease: the live request and its run become unknown, never replayed.
    await until('X unknown', async () => ((await stateOf(x.requestId)) === 'unknown' ? true : undefined), 30_000);
    // The record follows the request (the expiring worker writes it just after).
    const xRecord = await until('X recorded unknown', async () => {
      const record = await store.readSession(x.sessionId);
      return record.runs[0]?.status === 'unknown' ? record : undefined;
    });
    expect(xRecord.runs.map((run) => [run.id, run.status, run.reason])).toEqual([['r1', 'unknown', 'owner_died']]);
    expect(xRecord.status).toBe('needs_attention');
    // Its queued turns are still there, waiting for w-a (worker_lost).
    for (const w of waiting) expect(await stateOf(w.requestId)).toBe('queued');
    const status = await fleetStatus(store);
    expect(status.waitingOnLostWorkers.map((w) => [w.requestId, w.worker, w.reason])).toEqual(
      waiting.map((w) => [w.requestId, 'w-a', 'worker_lost']),
    );
    expect(status.workers.map((w) => [w.name, w.alive])).toEqual([
      ['w-a', false],
      ['w-b', true],
    ]);
    // w-b was not affected: Z's seven turns all ran, in order.
    await until('Z done', async () => {
      const states = await Promise.all(zTurns.map((t) => stateOf(t.requestId)));
      return states.every((s) => s === 'done') ? true : undefined;
    });
    const zRecord = await store.readSession(z.sessionId);
    expect(zRecord.runs.map((run) => run.status)).toEqual(Array(7).fill('completed'));
    expect(zRecord.runs.map((run) => /t-\d+/.exec(run.prompt)?.[0])).toEqual(['t-10', 't-11', 't-12', 't-13', 't-14', 't-15', 't-16']);

    const xAgents = () => findProcesses(join(a.stateDir, 'sessions', x.sessionId, 'home'));
    expect(xAgents()).toHaveLength(1);
    // w-a restarted (same name, same state directory): it recovers its sessions and runs what waited.
    const a2 = await rig.startWorker('w-a', { approved: [wsA], maxConcurrentRuns: 1, workerLeaseMs: 3000 });
    expect(await rig.drained(60_000), a2.stderr()).toBe(0);
    const after = await rows();
    const result = (requestId: number) => after.find((r) => r.id === String(requestId))?.result;
    // Y's waiting turns ran (once each); X's were refused: its turn's outcome is unknown until a person reconciles it.
    expect(result(waiting[2]!.requestId)?.handle).toMatchObject({ runId: 'r2' });
    expect(result(waiting[3]!.requestId)?.handle).toMatchObject({ runId: 'r3' });
    expect((await store.readSession(y.sessionId)).runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed']);
    expect(result(waiting[0]!.requestId)?.error?.code).toBe('session_unknown_outcome');
    expect(result(waiting[1]!.requestId)?.error?.code).toBe('session_unknown_outcome');
    expect((await store.readSession(x.sessionId)).runs.map((run) => run.status)).toEqual(['unknown']);
    // The dead worker's agent was stopped by the recovery; t-2 never ran again, t-3/t-4 never ran.
    expect(await waitForNoProcesses(xAgents, 15_000)).toEqual([]);
    expect(a2.stderr()).toContain(`stopped 1 process(es) its previous process left running for session ${x.sessionId}`);
    const ledger = await rig.ledger();
    const count = (token: string, what: string) => ledger.filter((l) => l.token === token && l.what === what).length;
    expect(count('t-2', 'start')).toBe(1);
    expect(count('t-2', 'end')).toBe(0);
    expect(count('t-3', 'start') + count('t-4', 'start')).toBe(0);
    for (const token of ['t-1', 't-5', 't-6', 't-10', 't-16']) expect([count(token, 'start'), count(token, 'end')]).toEqual([1, 1]);
  }, 180_000);

  it('SIGTERM: the live turn is interrupted and recorded, its request finished, the lease released, no process left', async () => {
    const rig = await newRig();
    const a = await rig.startWorker('w-a', { maxConcurrentRuns: 2, workerLeaseMs: 30_000 });
    const store = await rig.store();
    const x = await rig.create(store, 't-1 sleep:60000');
    await rig.accepted(store, x.requestId);
    await until('t-1 started', async () => ((await rig.ledger()).some((l) => l.token === 't-1' && l.what === 'start') ? true : undefined));
    process.kill(a.pid, 'SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    const record = await store.readSession(x.sessionId);
    expect(record.runs.map((run) => run.status)).toEqual(['interrupted']);
    expect((await rig.ledger()).filter((l) => l.token === 't-1').map((l) => l.what)).toEqual(['start', 'interrupted']);
    expect(await rig.sql('SELECT state FROM queue')).toEqual([{ state: 'done' }]);
    // The lease is released at once: the name can be taken again without waiting 30 s.
    expect((await fleetStatus(store)).workers.map((w) => [w.name, w.alive])).toEqual([['w-a', false]]);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    const again = await rig.startWorker('w-a', { maxConcurrentRuns: 2, workerLeaseMs: 30_000 });
    expect(again.stderr()).toContain('serving the fleet');
  }, 120_000);
});

describe('fleet: shared homes', () => {
  it("with state.sharedHomes, a lost worker's idle session is adopted by another worker for its next turn; without, it waits", async () => {
    const rig = await newRig();
    const shared = join(rig.root, 'shared-state');
    const a = await rig.startWorker('w-a', { maxConcurrentRuns: 2, workerLeaseMs: 3000, sharedHomes: true, stateDir: shared });
    const store = await rig.store();
    const s = await rig.create(store, 't-1 sleep:10');
    await rig.accepted(store, s.requestId);
    expect(await rig.drained(30_000)).toBe(0);
    process.kill(a.pid, 'SIGKILL');
    await a.exited;
    const next = await rig.send(store, s.sessionId, 't-2 sleep:10');
    // A worker without shared homes leaves it waiting for w-a ...
    const c = await rig.startWorker('w-c', { maxConcurrentRuns: 2, workerLeaseMs: 3000 });
    await until('w-a lost', async () => ((await fleetStatus(store)).waitingOnLostWorkers.length === 1 ? true : undefined), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await rig.sql<{ state: string }>('SELECT state FROM queue WHERE id = $1', [next.requestId]))[0]?.state).toBe('queued');
    process.kill(c.pid, 'SIGTERM');
    await c.exited;
    // ... one with shared homes (the same state directory) adopts it and runs the turn there.
    await rig.startWorker('w-b', { maxConcurrentRuns: 2, workerLeaseMs: 3000, sharedHomes: true, stateDir: shared });
    expect(await rig.drained(30_000)).toBe(0);
    expect(await rig.sql('SELECT worker FROM session_homes')).toEqual([{ worker: 'w-b' }]);
    const record = await store.readSession(s.sessionId);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'completed'],
    ]);
    expect((await rig.ledger()).map((l) => `${l.token} ${l.what}`)).toEqual(['t-1 start', 't-1 end', 't-2 start', 't-2 end']);
  }, 120_000);
});

describe('fleet: a worker that lost its lease', () => {
  it('restarted at once after kill -9, it waits out its dead process lease and serves; a live holder of the name is refused', async () => {
    const rig = await newRig();
    const a = await rig.startWorker('w-a', { maxConcurrentRuns: 1, workerLeaseMs: 3000 });
    await expect(rig.startWorker('w-a', { maxConcurrentRuns: 1, workerLeaseMs: 3000 })).rejects.toThrow(/registered by a live process/);
    process.kill(a.pid, 'SIGKILL');
    await a.exited;
    const again = await rig.startWorker('w-a', { maxConcurrentRuns: 1, workerLeaseMs: 3000 });
    expect(again.stderr()).toContain(`waiting for the lease of its previous process (pid ${a.pid}, gone) to expire`);
    const store = await rig.store();
    const x = await rig.create(store, 't-1 sleep:10');
    await rig.accepted(store, x.requestId);
    expect(await rig.drained(30_000)).toBe(0);
  }, 120_000);

  it('stops: its live turn is interrupted, it claims nothing more, and it exits with worker_lease_lost (exit 6)', async () => {
    const rig = await newRig();
    const a = await rig.startWorker('w-a', { maxConcurrentRuns: 2, workerLeaseMs: 3000 });
    const store = await rig.store();
    const x = await rig.create(store, 't-1 sleep:60000');
    await rig.accepted(store, x.requestId);
    await until('t-1 started', async () => ((await rig.ledger()).some((l) => l.token === 't-1' && l.what === 'start') ? true : undefined));
    // Another registration takes the name over (as after a partition longer than the lease).
    await rig.sql("UPDATE workers SET generation = generation + 1 WHERE name = 'w-a'");
    const exited = await a.exited;
    expect(exited, a.stderr()).toEqual({ code: 6, signal: null });
    expect(a.stderr()).toContain('has no live lease');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    const later = await rig.create(store, 't-2 sleep:10');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await rig.sql<{ state: string }>('SELECT state FROM queue WHERE id = $1', [later.requestId]))[0]?.state).toBe('queued');
    expect((await rig.ledger()).map((l) => `${l.token} ${l.what}`)).toEqual(['t-1 start', 't-1 interrupted']);
  }, 120_000);
});

describe('fleet: the database restarted under load', () => {
  it('workers reconnect; every turn runs exactly once, nothing lost or duplicated', async () => {
    const rig = await newRig();
    const workers = await Promise.all([
      rig.startWorker('w-a', { maxConcurrentRuns: 3, workerLeaseMs: 15_000 }),
      rig.startWorker('w-b', { maxConcurrentRuns: 3, workerLeaseMs: 15_000 }),
    ]);
    const store = await rig.store();
    const sessions: string[] = [];
    let n = 0;
    for (let s = 0; s < 20; s++) sessions.push((await rig.create(store, `t-${n++} sleep:150`)).sessionId);
    for (let turn = 1; turn < 3; turn++) for (const sessionId of sessions) await rig.send(store, sessionId, `t-${n++} sleep:150`);
    await until('turns under way', async () => ((await rig.ledger()).filter((l) => l.what === 'end').length >= 6 ? true : undefined));
    await rig.server.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await rig.server.start();
    expect(await rig.drained(120_000), workers.map((w) => w.stderr()).join('\n')).toBe(0);

    const requests = await rig.sql<Row>('SELECT id, session_id, state, worker, result FROM queue ORDER BY id');
    expect(requests).toHaveLength(60);
    expect(requests.filter((r) => r.state === 'done' && r.result?.handle !== undefined)).toHaveLength(60);
    const runs = await rig.sql<{ status: string; prompt: string }>("SELECT status, record->>'prompt' AS prompt FROM runs");
    expect(runs).toHaveLength(60);
    expect(runs.every((run) => run.status === 'completed')).toBe(true);
    expect(new Set(runs.map((run) => /t-\d+/.exec(run.prompt)?.[0])).size).toBe(60);
    const ledger = await rig.ledger();
    const starts = ledger.filter((l) => l.what === 'start').map((l) => l.token);
    expect(starts).toHaveLength(60);
    expect(new Set(starts).size).toBe(60);
    expect(new Set(ledger.filter((l) => l.what === 'end').map((l) => l.token)).size).toBe(60);
    // Both workers are still up, and said they lost the database.
    for (const worker of workers) {
      expect(await Promise.race([worker.exited, new Promise((resolve) => setTimeout(() => resolve('running'), 100))])).toBe('running');
    }
    expect(workers.some((w) => w.stderr().includes('a database connection failed'))).toBe(true);
  }, 240_000);
});
