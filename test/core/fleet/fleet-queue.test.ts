import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import {
  abandonPreviousClaims,
  awaitAccepted,
  awaitDone,
  claimedBy,
  claimRequests,
  expireLostWorkers,
  finishRequest,
  fleetStatus,
  homedSessions,
  lostSessions,
  queuedRequests,
  requestCancel,
  setApprovedRoots,
  settleRequest,
  submitCreate,
  submitPersonRequest,
  submitSend,
} from '../../../core/fleet/fleet-queue.js';
import { WorkerLease } from '../../../core/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../../core/store/postgres-store.js';
import type { SessionRecord } from '../../../core/store/index.js';
import { sql, startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.js';

// The fleet's request queue on a real PostgreSQL: routing by approved roots and session HOMEs,
// results and errors as clients await them, cancellation, lost workers (never replayed).

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
  const store = await createPostgresStore({ url, followPollMs: 200 });
  opened.push(store);
  return store;
}

async function worker(store: PostgresStore, name: string, roots: string[], max = 2, leaseMs = 60_000): Promise<WorkerLease> {
  const lease = await WorkerLease.register(store, { name, host: hostname(), pid: process.pid, maxConcurrentRuns: max, leaseMs });
  leases.push(lease);
  await setApprovedRoots(store, name, roots);
  return lease;
}

const create = (workspace: string, prompt = 'hi') => ({ adapter: 'fake', workspace, prompt });
const handle = (sessionId: string, runId: string) => ({
  sessionId,
  runId,
  state: 'running' as const,
  settings: { autonomy: 'low' as const },
});

function record(id: string, runStatus: 'running' | 'completed'): SessionRecord {
  const now = new Date().toISOString();
  return {
    id,
    adapter: 'fake',
    workspace: '/srv/a/p',
    status: runStatus === 'running' ? 'working' : 'idle',
    createdAt: now,
    updatedAt: now,
    runs: [{ id: 'r1', status: runStatus, prompt: 'hi', autonomy: 'low', startedAt: now }],
  };
}

describe('fleet requests', () => {
  it('a create goes to a worker whose approved roots contain its workspace, which then holds the session; its sends go there only', async () => {
    const url = await server.createDatabase();
    const [a, b, client] = [await open(url), await open(url), await open(url)];
    await worker(a, 'w-a', ['/srv/a']);
    await worker(b, 'w-b', ['/srv/b/']);
    const first = await submitCreate(client, create('/srv/b/project'));
    expect(first.sessionId).toMatch(/^s-[0-9a-f]{10}$/);
    // A workspace whose path merely starts with a root's name is not inside it.
    await submitCreate(client, create('/srv/abc'));
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
    const claimed = await claimRequests(b, { worker: 'w-b' });
    expect(claimed).toEqual([
      {
        id: first.requestId,
        sessionId: first.sessionId,
        op: 'create',
        request: { ...create('/srv/b/project'), sessionId: first.sessionId },
      },
    ]);
    expect(await homedSessions(b, 'w-b')).toEqual([first.sessionId]);
    const send = await submitSend(client, { sessionId: first.sessionId, prompt: 'more' });
    // FIFO: the send waits while the create is claimed; then only the HOME's holder takes it.
    expect(await claimRequests(b, { worker: 'w-b' })).toEqual([]);
    const accepted = awaitAccepted(client, first.requestId);
    await settleRequest(b, 'w-b', first.requestId, { handle: handle(first.sessionId, 'r1') });
    expect(await accepted).toEqual(handle(first.sessionId, 'r1'));
    await finishRequest(b, 'w-b', first.requestId);
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
    expect((await claimRequests(b, { worker: 'w-b' })).map((r) => r.id)).toEqual([send.requestId]);
    // Run ids are per session: another session's r1 is recorded as well.
    const other = await submitCreate(client, create('/srv/b/other'));
    expect((await claimRequests(b, { worker: 'w-b' })).map((r) => r.id)).toEqual([other.requestId]);
    await settleRequest(b, 'w-b', other.requestId, { handle: handle(other.sessionId, 'r1') });
    expect(await queuedRequests(client, first.sessionId)).toEqual([
      expect.objectContaining({ requestId: send.requestId, op: 'send', state: 'claimed', worker: 'w-b' }),
    ]);
  });

  it('the workspace lock holds across workers: nothing is claimed whose workspace is, contains or lies inside one another worker holds', async () => {
    const url = await server.createDatabase();
    const [a, b, client] = [await open(url), await open(url), await open(url)];
    await worker(a, 'w-a', ['/srv'], 1);
    await worker(b, 'w-b', ['/srv'], 3);
    const first = await submitCreate(client, create('/srv/repo'));
    expect((await claimRequests(a, { worker: 'w-a' })).map((r) => r.id)).toEqual([first.requestId]);
    const inside = await submitCreate(client, create('/srv/repo/sub'));
    const enclosing = await submitCreate(client, create('/srv'));
    // A path that merely starts with the same name is another workspace.
    const sibling = await submitCreate(client, create('/srv/repo-two'));
    expect((await claimRequests(b, { worker: 'w-b' })).map((r) => r.id)).toEqual([sibling.requestId]);
    await settleRequest(a, 'w-a', first.requestId, { handle: handle(first.sessionId, 'r1') });
    await finishRequest(a, 'w-a', first.requestId);
    // Released: b takes both; its own orchestrator orders its own turns, as on one host.
    expect((await claimRequests(b, { worker: 'w-b' })).map((r) => r.id)).toEqual([inside.requestId, enclosing.requestId]);
    // A send has no workspace of its own: its session's record says where it runs.
    await a.writeSession({ ...record(first.sessionId, 'completed'), workspace: '/srv/repo' });
    const send = await submitSend(client, { sessionId: first.sessionId, prompt: 'more' });
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
    // A refused request ends at once (done) and frees its workspace as well.
    for (const id of [sibling.requestId, inside.requestId, enclosing.requestId]) {
      await settleRequest(b, 'w-b', id, { error: { code: 'usage', message: 'refused' } });
    }
    expect((await claimRequests(a, { worker: 'w-a' })).map((r) => r.id)).toEqual([send.requestId]);
    // Two readers (autonomy off) share a workspace across workers; a writer still waits for them.
    const reader = await submitCreate(client, { ...create('/srv/shared'), autonomy: 'off' as const });
    expect((await claimRequests(b, { worker: 'w-b' })).map((r) => r.id)).toEqual([reader.requestId]);
    const otherReader = await submitCreate(client, { ...create('/srv/shared'), autonomy: 'off' as const });
    const writer = await submitCreate(client, create('/srv/shared/sub'));
    await settleRequest(a, 'w-a', send.requestId, { error: { code: 'usage', message: 'refused' } });
    expect((await claimRequests(a, { worker: 'w-a' })).map((r) => r.id)).toEqual([otherReader.requestId]);
    await settleRequest(a, 'w-a', otherReader.requestId, { error: { code: 'usage', message: 'refused' } });
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
    expect(await queuedRequests(client)).toContainEqual(expect.objectContaining({ requestId: writer.requestId, state: 'queued' }));
  });

  it("awaitAccepted throws the worker's error with its code; a send to an unknown session is refused at once", async () => {
    const url = await server.createDatabase();
    const [a, client] = [await open(url), await open(url)];
    await worker(a, 'w-a', ['/srv']);
    const { requestId } = await submitCreate(client, create('/srv/x'));
    const waited = awaitAccepted(client, requestId).catch((error: unknown) => error);
    await claimRequests(a, { worker: 'w-a' });
    await settleRequest(a, 'w-a', requestId, { error: { code: 'model_unavailable', message: 'no model m', data: { model: 'm' } } });
    const error = await waited;
    expect(isOneWorksError(error, 'model_unavailable')).toBe(true);
    expect((error as Error).message).toBe('no model m');
    expect(await sql(url, 'SELECT state FROM queue WHERE id = $1', [requestId])).toEqual([{ state: 'done' }]);
    const refused = await submitSend(client, { sessionId: 's-0000000000', prompt: 'x' }).catch((e: unknown) => e);
    expect(isOneWorksError(refused, 'session_not_found')).toBe(true);
  });

  it('cancel drops queued requests at once (never claimed) and asks the holder of a live one, waiting until it ends', async () => {
    const url = await server.createDatabase();
    const [a, client] = [await open(url), await open(url)];
    await worker(a, 'w-a', ['/srv']);
    const first = await submitCreate(client, create('/srv/x'));
    const queued = await submitSend(client, { sessionId: first.sessionId, prompt: 'later' });
    await claimRequests(a, { worker: 'w-a' });
    await settleRequest(a, 'w-a', first.requestId, { handle: handle(first.sessionId, 'r1') });
    const asked: string[] = [];
    // A wake without payload says LISTEN took effect: a cancel notified before that would be missed.
    let listening!: () => void;
    const ready = new Promise<void>((resolve) => {
      listening = resolve;
    });
    const stop = a.listen('one_works_queue_cancel', (payload) => {
      if (payload === undefined) {
        listening();
        return;
      }
      asked.push(payload);
      // The worker cancels its turn and ends the request.
      void finishRequest(a, 'w-a', Number(payload));
    });
    try {
      await ready;
      const waitedFor = awaitAccepted(client, queued.requestId).catch((e: unknown) => e);
      await requestCancel(client, first.sessionId, undefined, 10_000);
      expect(asked).toEqual([String(first.requestId)]);
      expect(isOneWorksError(await waitedFor, 'request_cancelled')).toBe(true);
    } finally {
      stop();
    }
    expect(await sql(url, 'SELECT id, state FROM queue ORDER BY id')).toEqual([
      { id: String(first.requestId), state: 'done' },
      { id: String(queued.requestId), state: 'cancelled' },
    ]);
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
  });

  it("a lost worker's live request and run become unknown (never replayed); its session's later requests wait for it, or are adopted with shared homes", async () => {
    const url = await server.createDatabase();
    const [a, b, client] = [await open(url), await open(url), await open(url)];
    // Long enough for the claim below under load; short enough to expire within the poll.
    await worker(a, 'w-a', ['/srv'], 2, 2000);
    await worker(b, 'w-b', ['/srv']);
    const first = await submitCreate(client, create('/srv/x'));
    await claimRequests(a, { worker: 'w-a' });
    await a.writeSession({ ...record(first.sessionId, 'running'), workspace: '/srv/x' });
    await settleRequest(a, 'w-a', first.requestId, { handle: handle(first.sessionId, 'r1') });
    const later = await submitSend(client, { sessionId: first.sessionId, prompt: 'later' });
    // No heartbeat: w-a's lease runs out; w-b expires it.
    await expect.poll(async () => (await expireLostWorkers(b)).map((r) => r.id), { timeout: 10_000 }).toEqual([first.requestId]);
    expect(await expireLostWorkers(b)).toEqual([]);
    const stored = await client.readSession(first.sessionId);
    expect(stored.runs[0]).toMatchObject({ id: 'r1', status: 'unknown', reason: 'owner_died' });
    expect(stored.status).toBe('needs_attention');
    expect(await sql(url, 'SELECT state FROM queue WHERE id = $1', [first.requestId])).toEqual([{ state: 'unknown' }]);
    // The later send waits for its HOME's holder (worker_lost) ...
    expect(await claimRequests(b, { worker: 'w-b' })).toEqual([]);
    const status = await fleetStatus(client);
    expect(status.waitingOnLostWorkers).toEqual([
      { requestId: later.requestId, sessionId: first.sessionId, worker: 'w-a', reason: 'worker_lost' },
    ]);
    expect(status.workers.map((w) => [w.name, w.alive])).toEqual([
      ['w-a', false],
      ['w-b', true],
    ]);
    expect(status.queue).toEqual({ queued: 1, claimed: 0, byWorker: {} });
    // ... unless homes are shared: then w-b adopts the session.
    expect((await claimRequests(b, { worker: 'w-b', sharedHomes: true })).map((r) => r.id)).toEqual([later.requestId]);
    expect(await homedSessions(b, 'w-b')).toEqual([first.sessionId]);
  });

  it("a person's reconcile/resolve goes to the worker holding the session, FIFO behind its send; awaitDone gets ok or the worker's error; a lost holder's waits or is adopted", async () => {
    const url = await server.createDatabase();
    const [a, b, client] = [await open(url), await open(url), await open(url)];
    await worker(a, 'w-a', ['/srv/a']);
    await worker(b, 'w-b', ['/srv/b']);
    const first = await submitCreate(client, create('/srv/a/x'));
    await claimRequests(a, { worker: 'w-a' });
    await a.writeSession({ ...record(first.sessionId, 'running'), workspace: '/srv/a/x' });
    await settleRequest(a, 'w-a', first.requestId, { handle: handle(first.sessionId, 'r1') });
    await finishRequest(a, 'w-a', first.requestId);
    const send = await submitSend(client, { sessionId: first.sessionId, prompt: 'more' });
    const verdict = { sessionId: first.sessionId, runId: 'r1', status: 'interrupted' as const, note: 'n' };
    const reconcile = await submitPersonRequest(client, { op: 'reconcile', request: verdict });
    // Only the HOME's holder, and only after the send before it.
    expect(await claimRequests(b, { worker: 'w-b' })).toEqual([]);
    expect((await claimRequests(a, { worker: 'w-a' })).map((r) => r.id)).toEqual([send.requestId]);
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([]);
    await settleRequest(a, 'w-a', send.requestId, { error: { code: 'session_unknown_outcome', message: 'unknown' } });
    expect(await claimRequests(a, { worker: 'w-a' })).toEqual([
      { id: reconcile.requestId, sessionId: first.sessionId, op: 'reconcile', request: verdict },
    ]);
    const done = awaitDone(client, reconcile.requestId);
    await settleRequest(a, 'w-a', reconcile.requestId, { ok: true });
    await expect(done).resolves.toBeUndefined();
    expect(await sql(url, 'SELECT state, run_id FROM queue WHERE id = $1', [reconcile.requestId])).toEqual([
      { state: 'done', run_id: null },
    ]);
    // The worker's refusal reaches the client with its code and message.
    const resolve = await submitPersonRequest(client, { op: 'resolve', request: { sessionId: first.sessionId } });
    expect((await claimRequests(a, { worker: 'w-a' })).map((r) => [r.id, r.op])).toEqual([[resolve.requestId, 'resolve']]);
    const refused = awaitDone(client, resolve.requestId).catch((error: unknown) => error);
    await settleRequest(a, 'w-a', resolve.requestId, { error: { code: 'usage', message: 'does not need attention' } });
    const error = await refused;
    expect(isOneWorksError(error, 'usage')).toBe(true);
    expect((error as Error).message).toBe('does not need attention');
    // An unknown session is refused at once.
    await expect(submitPersonRequest(client, { op: 'resolve', request: { sessionId: 's-0000000000' } })).rejects.toMatchObject({
      code: 'session_not_found',
    });

    // A lost holder: the request waits for it (worker_lost) unless homes are shared.
    const c = await open(url);
    await worker(c, 'w-c', ['/srv/c'], 1, 1500);
    const lostOne = await submitCreate(client, create('/srv/c/y'));
    expect((await claimRequests(c, { worker: 'w-c' })).map((r) => r.id)).toEqual([lostOne.requestId]);
    await settleRequest(c, 'w-c', lostOne.requestId, { error: { code: 'internal', message: 'x' } });
    await expect
      .poll(async () => (await fleetStatus(client)).workers.find((w) => w.name === 'w-c')?.alive, { timeout: 10_000 })
      .toBe(false);
    const waiting = await submitPersonRequest(client, { op: 'resolve', request: { sessionId: lostOne.sessionId } });
    expect((await fleetStatus(client)).waitingOnLostWorkers).toEqual([
      { requestId: waiting.requestId, sessionId: lostOne.sessionId, worker: 'w-c', reason: 'worker_lost' },
    ]);
    expect(await claimRequests(b, { worker: 'w-b' })).toEqual([]);
    expect((await claimRequests(b, { worker: 'w-b', sharedHomes: true })).map((r) => r.id)).toEqual([waiting.requestId]);
  });

  it("a restarted worker's requests of its previous process become unknown; the fleet limit holds across workers", async () => {
    const url = await server.createDatabase();
    const [a, b, client] = [await open(url), await open(url), await open(url)];
    const lease = await worker(a, 'w-a', ['/srv'], 4, 2000);
    await worker(b, 'w-b', ['/srv'], 4);
    const one = await submitCreate(client, create('/srv/1'));
    await claimRequests(a, { worker: 'w-a' });
    lease.stop();
    await expect.poll(() => worker(a, 'w-a', ['/srv'], 4).catch(() => undefined), { timeout: 10_000 }).toBeInstanceOf(WorkerLease);
    expect(await abandonPreviousClaims(a, 'w-a')).toEqual([{ id: one.requestId, sessionId: one.sessionId }]);
    for (let i = 0; i < 4; i++) await submitCreate(client, create(`/srv/n${i}`));
    const fleet = 3;
    const gotA = await claimRequests(a, { worker: 'w-a', fleetMaxConcurrentRuns: fleet });
    const gotB = await claimRequests(b, { worker: 'w-b', fleetMaxConcurrentRuns: fleet });
    expect(gotA.length + gotB.length).toBe(fleet);
    expect(gotA).toHaveLength(3);
    // What a worker holds, read back (after a claim whose reply was lost): exactly its claims.
    expect(await claimedBy(a, 'w-a')).toEqual(gotA);
    expect(await claimedBy(b, 'w-b')).toEqual([]);
    // Its lost session (the abandoned request's) is what a restart sweeps.
    expect(await lostSessions(a, 'w-a')).toEqual([one.sessionId]);
  });
});
