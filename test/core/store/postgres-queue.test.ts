import { hostname } from 'node:os';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { type ClaimedTurn, claimTurns, enqueueTurn, expireLeases, finishTurn, WorkerLease } from '../../../core/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../../core/store/postgres-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.js';

// The fleet queue on a real PostgreSQL: two claimers (each with its own store, i.e. its own
// connections, as two worker processes), exactly-once claiming, FIFO per session, limits, leases.

let server: TestPostgres;
const opened: PostgresStore[] = [];
const leases: WorkerLease[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);

afterEach(async () => {
  for (const lease of leases.splice(0)) lease.stop();
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

afterAll(async () => {
  await server?.dispose();
});

async function open(url: string): Promise<PostgresStore> {
  const store = await createPostgresStore({ url });
  opened.push(store);
  return store;
}

async function register(store: PostgresStore, name: string, maxConcurrentRuns: number, leaseMs = 60_000): Promise<WorkerLease> {
  const lease = await WorkerLease.register(store, { name, host: hostname(), pid: process.pid, maxConcurrentRuns, leaseMs });
  leases.push(lease);
  return lease;
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

// The most intervals [start, end) open at one instant.
function maxOverlap(intervals: Array<{ start: number; end: number }>): number {
  const edges = intervals.flatMap(({ start, end }) => [
    { at: start, delta: 1 },
    { at: end, delta: -1 },
  ]);
  // An end and a start at the same instant: the end first (the slot was free again).
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const edge of edges) {
    open += edge.delta;
    most = Math.max(most, open);
  }
  return most;
}

// A worker's loop: claim what fits, "run" each claimed turn for a moment, finish it; until `done()`.
async function workLoop(
  store: PostgresStore,
  worker: string,
  fleetMaxConcurrentRuns: number | undefined,
  claimed: ClaimedTurn[],
  done: () => boolean,
): Promise<void> {
  const running = new Set<Promise<void>>();
  while (!done()) {
    const turns = await claimTurns(store, { worker, ...(fleetMaxConcurrentRuns === undefined ? {} : { fleetMaxConcurrentRuns }) });
    claimed.push(...turns);
    for (const turn of turns) {
      const run = (async () => {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 8)));
        await finishTurn(store, worker, turn.runId);
      })();
      running.add(run);
      void run.finally(() => running.delete(run));
    }
    // Wait for a slot to free up (or a moment, when nothing runs here) before claiming again.
    if (running.size > 0) await Promise.race(running);
    else await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(running);
}

describe('fleet queue', () => {
  it.each([
    { fleet: 5, label: 'a fleet limit of 5 (claims serialised)' },
    { fleet: undefined, label: 'no fleet limit (claimers skip locked rows)' },
  ])(
    'two workers claim 200 turns over 20 sessions with $label: each exactly once, FIFO per session, one live turn per session, limits kept',
    async ({ fleet }) => {
      const url = await server.createDatabase();
      const [a, b, submitter] = [await open(url), await open(url), await open(url)];
      await register(a, 'w-a', 4);
      await register(b, 'w-b', 3);
      const sessions = Array.from({ length: 20 }, (_, i) => `s-${i}`);
      const submitted = new Map<string, string[]>(sessions.map((s) => [s, []]));
      for (let n = 0; n < 200; n++) {
        const sessionId = sessions[(n * 7) % sessions.length] as string;
        const runId = `r-${n}`;
        await enqueueTurn(submitter, sessionId, runId);
        submitted.get(sessionId)?.push(runId);
      }
      const claimedA: ClaimedTurn[] = [];
      const claimedB: ClaimedTurn[] = [];
      const done = (): boolean => claimedA.length + claimedB.length >= 200;
      await Promise.all([workLoop(a, 'w-a', fleet, claimedA, done), workLoop(b, 'w-b', fleet, claimedB, done)]);

      // Exactly once: 200 claims, 200 distinct turns, all of them; both workers took part.
      const runIds = [...claimedA, ...claimedB].map((turn) => turn.runId);
      expect(runIds).toHaveLength(200);
      expect(new Set(runIds).size).toBe(200);
      expect(claimedA.length).toBeGreaterThan(0);
      expect(claimedB.length).toBeGreaterThan(0);
      const rows = await sql<{ session_id: string; run_id: string; worker: string; state: string; claimed: number; ended: number }>(
        url,
        `SELECT session_id, run_id, worker, state, extract(epoch FROM claimed_at) * 1e6 AS claimed, extract(epoch FROM ended_at) * 1e6 AS ended
       FROM queue ORDER BY claimed_at`,
      );
      expect(rows.filter((row) => row.state === 'done')).toHaveLength(200);
      // FIFO per session and never two live turns of a session (by the database's timestamps).
      for (const sessionId of sessions) {
        const own = rows.filter((row) => row.session_id === sessionId);
        expect(own.map((row) => row.run_id)).toEqual(submitted.get(sessionId));
        expect(maxOverlap(own.map((row) => ({ start: Number(row.claimed), end: Number(row.ended) })))).toBe(1);
      }
      // Limits: 4 on w-a, 3 on w-b, and the fleet's (7 without one: the workers' sum).
      const interval = (row: (typeof rows)[number]) => ({ start: Number(row.claimed), end: Number(row.ended) });
      expect(maxOverlap(rows.filter((row) => row.worker === 'w-a').map(interval))).toBeLessThanOrEqual(4);
      expect(maxOverlap(rows.filter((row) => row.worker === 'w-b').map(interval))).toBeLessThanOrEqual(3);
      expect(maxOverlap(rows.map(interval))).toBeLessThanOrEqual(fleet ?? 7);
      expect(maxOverlap(rows.map(interval))).toBeGreaterThan(1);
    },
    120_000,
  );

  it('the database refuses a second live turn in a session, whoever claims it', async () => {
    const url = await server.createDatabase();
    const store = await open(url);
    await register(store, 'w-a', 2);
    await enqueueTurn(store, 's-1', 'r-1');
    await enqueueTurn(store, 's-1', 'r-2');
    expect((await claimTurns(store, { worker: 'w-a' })).map((turn) => turn.runId)).toEqual(['r-1']);
    // The claim query never picks r-2 while r-1 is live; a direct write is refused too.
    expect(await claimTurns(store, { worker: 'w-a' })).toEqual([]);
    await expect(sql(url, "UPDATE queue SET state = 'claimed', worker = 'w-a' WHERE run_id = 'r-2'")).rejects.toThrow(
      /queue_one_live_turn/,
    );
    await finishTurn(store, 'w-a', 'r-1');
    expect((await claimTurns(store, { worker: 'w-a' })).map((turn) => turn.runId)).toEqual(['r-2']);
  });
});

describe('worker leases', () => {
  it('a worker whose lease expired claims nothing; its live turn becomes unknown and is never claimed again', async () => {
    const url = await server.createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await register(a, 'w-a', 1, 300);
    await register(b, 'w-b', 2);
    await enqueueTurn(a, 's-1', 'r-1');
    await enqueueTurn(a, 's-2', 'r-2');
    expect((await claimTurns(a, { worker: 'w-a' })).map((turn) => turn.runId)).toEqual(['r-1']);
    // No heartbeat: the lease runs out.
    await expect
      .poll(() => claimTurns(a, { worker: 'w-a' }).catch((error: unknown) => error), { timeout: 10_000 })
      .toSatisfy((error: unknown) => isOneWorksError(error, 'worker_lease_lost'));
    expect(await expireLeases(b)).toEqual([{ id: expect.any(Number), sessionId: 's-1', runId: 'r-1', worker: 'w-a' }]);
    expect((await claimTurns(b, { worker: 'w-b' })).map((turn) => turn.runId)).toEqual(['r-2']);
    expect(await claimTurns(b, { worker: 'w-b' })).toEqual([]);
    expect(await sql(url, "SELECT state FROM queue WHERE run_id = 'r-1'")).toEqual([{ state: 'unknown' }]);
    expect(isOneWorksError(await finishTurn(a, 'w-a', 'r-1').catch((error: unknown) => error), 'worker_lease_lost')).toBe(true);
  });

  it('heartbeats keep a lease; a second registration of a live name is refused; after expiry the name is taken over and the old lease is lost', async () => {
    const url = await server.createDatabase();
    const store = await open(url);
    const first = await register(store, 'w-a', 1, 1500);
    const errors: unknown[] = [];
    first.startHeartbeat(100, (error) => errors.push(error));
    const expiry = async (): Promise<number> =>
      Number((await sql<{ t: number }>(url, "SELECT extract(epoch FROM lease_expires_at) AS t FROM workers WHERE name = 'w-a'"))[0]?.t);
    const initial = await expiry();
    await expect.poll(expiry, { timeout: 10_000 }).toBeGreaterThan(initial);
    expect(isOneWorksError(await register(store, 'w-a', 1).catch((error: unknown) => error), 'state_locked')).toBe(true);
    first.stop();
    await expect.poll(() => register(store, 'w-a', 1).catch(() => undefined), { timeout: 10_000 }).toBeInstanceOf(WorkerLease);
    expect(isOneWorksError(await first.heartbeat().catch((error: unknown) => error), 'worker_lease_lost')).toBe(true);
    expect(errors).toEqual([]);
  });
});
