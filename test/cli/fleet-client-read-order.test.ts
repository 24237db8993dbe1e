import { describe, expect, it } from 'vitest';
import { FleetClient } from '../../cli/fleet/fleet-client.js';
import type { QueuedRequest } from '../../core/fleet/fleet-queue.js';
import type { PostgresStore, SessionRecord } from '../../core/store/index.js';

// A fleet session's summary (`status`, `list`, and so `wait`) must never show a session settled
// while its latest run is still `running`. A worker ends a turn in two writes: the record with the
// run's outcome, then the queue request `done` (core/fleet/fleet-worker.ts, after the book's
// flush). The client's two reads are separate queries; this models the database around them so
// that the worker's two writes land right after the client's first read: whatever the client reads
// first is older than what it reads second. The fleet bench once saw such a pair (an idle session
// with a `running` run) when the reads went side by side.

const ID = 's-0a0b0c0d0e';
const AT = '2026-01-01T00:00:00.000Z';

function database() {
  let finished = false;
  const record = (): SessionRecord =>
    ({
      id: ID,
      adapter: 'process:echo',
      workspace: '/ws',
      createdAt: AT,
      updatedAt: AT,
      status: finished ? 'idle' : 'working',
      runs: [
        finished
          ? { id: 'r1', prompt: 'p', autonomy: 'low', status: 'completed', reason: 'completed', text: 'done', usage: { reported: false } }
          : { id: 'r1', prompt: 'p', autonomy: 'low', status: 'running' },
      ],
    }) as SessionRecord;
  const requests = (): QueuedRequest[] =>
    finished ? [] : [{ requestId: 1, sessionId: ID, op: 'create', state: 'claimed', worker: 'w1', runId: 'r1', submittedAt: AT }];
  let firstRead = true;
  // The read answers with what was there when it was made; the worker's writes land right after the first read.
  const read = async <T>(snapshot: () => T): Promise<T> => {
    const value = snapshot();
    if (firstRead) {
      firstRead = false;
      finished = true;
    }
    await new Promise((resolve) => setImmediate(resolve));
    return value;
  };
  const store = {
    where: 'test database',
    readSession: () => read(record),
    listSessions: () => read(() => [record()]),
  } as unknown as PostgresStore;
  const queue = {
    queuedRequests: () => read(requests),
    fleetStatus: async () => ({ waitingOnLostWorkers: [] }),
  };
  return { store, queue };
}

function client(): FleetClient {
  const { store, queue } = database();
  return new FleetClient(store, queue as unknown as ConstructorParameters<typeof FleetClient>[1], {
    defaultAdapter: 'process:echo',
    limits: {} as ConstructorParameters<typeof FleetClient>[2]['limits'],
  });
}

describe('fleet summaries read while a worker ends a turn', () => {
  it('status shows the session working, or settled with its outcome: never settled with a running run', async () => {
    const summary = await client().status(ID);
    expect(summary.state === 'working' || summary.latestRun?.status === 'completed', JSON.stringify(summary)).toBe(true);
  });

  it('list does too', async () => {
    const [summary] = await client().list();
    expect(summary).toBeDefined();
    expect(summary!.state === 'working' || summary!.latestRun?.status === 'completed', JSON.stringify(summary)).toBe(true);
  });
});
