import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { ownerRecordOfThisProcess, type SessionRecord, type Store } from '../../../core/store/index.js';
import { logEvent, sessionRecord } from './store-helpers.js';

/**
 * What every Store promises, run against each backend (store-conformance-file.test.ts,
 * store-conformance-postgres.test.ts): records, runs, the event log and its follow, the owner,
 * removal. Backend-specific matters (file modes, torn lines, schema versions) stay in each
 * backend's own tests.
 */

/** One backend's state, fresh for one test. */
export interface StoreFixture {
  store: Store;
  /** Another store on the same state, as another process would open it. */
  reopen(): Promise<Store>;
  /** Stores `value` as session `sessionId`'s record without any check, as a bad write or an older version could leave it. */
  putRawRecord(sessionId: string, value: unknown): Promise<void>;
  /** Closes every store it opened and removes the state. */
  cleanup(): Promise<void>;
}

export interface StoreBackend {
  name: string;
  open(): Promise<StoreFixture>;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

// Collects followed events of `sessionId` until `count` arrived, then aborts the follow.
async function collect(
  store: Store,
  sessionId: string,
  options: { afterSeq?: number },
  count: number,
  whileFollowing: () => Promise<void>,
): Promise<RuntimeEvent[]> {
  const abort = new AbortController();
  const seen: RuntimeEvent[] = [];
  const reading = (async () => {
    for await (const event of store.followEvents(sessionId, { ...options, signal: abort.signal })) {
      seen.push(event);
      if (seen.length === count) abort.abort();
    }
  })();
  await whileFollowing();
  await reading;
  return seen;
}

export function describeStoreConformance(backend: StoreBackend): void {
  describe(`Store conformance: ${backend.name}`, () => {
    let fixture: StoreFixture;
    let store: Store;

    beforeEach(async () => {
      fixture = await backend.open();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('session records', () => {
      it('round-trips a record with its runs; a write replaces the whole record', async () => {
        const record = sessionRecord('s-1', {
          title: 'fix the bug',
          labels: ['a', 'b'],
          runs: [
            {
              id: 'r-1',
              prompt: 'hi',
              autonomy: 'low',
              status: 'completed',
              usage: { reported: false },
              startedAt: '2025-01-01T00:00:01.000Z',
            },
            { id: 'r-2', prompt: 'again', autonomy: 'high', status: 'queued' },
          ],
        });
        await store.writeSession(record);
        expect(await store.readSession('s-1')).toEqual(record);
        const fewer: SessionRecord = { ...record, title: undefined, status: 'working', runs: [record.runs[0] as SessionRecord['runs'][0]] };
        delete fewer.title;
        await store.writeSession(fewer);
        expect(await store.readSession('s-1')).toEqual(fewer);
        expect(await (await fixture.reopen()).readSession('s-1')).toEqual(fewer);
      });

      it('reports a missing session as session_not_found', async () => {
        expect(isOneWorksError(await failure(store.readSession('s-missing')), 'session_not_found')).toBe(true);
        expect(await store.hasSession('s-missing')).toBe(false);
      });

      it('refuses to write an invalid record, and nothing is stored', async () => {
        const bad = { ...sessionRecord('s-3'), status: 'exploded' } as unknown as SessionRecord;
        expect(isOneWorksError(await failure(store.writeSession(bad)), 'internal')).toBe(true);
        expect(await store.hasSession('s-3')).toBe(false);
      });

      it('refuses session ids that are not a safe path segment', async () => {
        for (const id of ['../escape', 'a/b', '..']) {
          expect(isOneWorksError(await failure(store.readSession(id)), 'usage')).toBe(true);
          expect(isOneWorksError(await failure(store.writeSession(sessionRecord(id))), 'usage')).toBe(true);
        }
      });

      it('lists records oldest first', async () => {
        await store.writeSession(sessionRecord('s-b', { createdAt: '2025-02-01T00:00:00.000Z' }));
        await store.writeSession(sessionRecord('s-a', { createdAt: '2025-03-01T00:00:00.000Z' }));
        await store.writeSession(sessionRecord('s-c', { createdAt: '2025-01-15T00:00:00.000Z' }));
        expect((await store.listSessions()).map((r) => r.id)).toEqual(['s-c', 's-b', 's-a']);
        expect(await store.hasSession('s-a')).toBe(true);
      });

      it('reports a record that breaks the schema as state_corrupt, lists around it, and leaves it alone', async () => {
        await store.writeSession(sessionRecord('s-good'));
        await fixture.putRawRecord('s-typo', {
          ...sessionRecord('s-typo'),
          runs: [{ id: 'r1', prompt: 'p', autonomy: 'low', status: 'complete' }],
        });
        const error = await failure(store.readSession('s-typo'));
        expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
        expect(await store.hasSession('s-typo')).toBe(true);
        expect((await store.listSessions()).map((r) => r.id)).toEqual(['s-good']);
        const scan = await store.scanSessions();
        expect(scan.records.map((r) => r.id)).toEqual(['s-good']);
        expect(scan.corrupt).toEqual([
          { sessionId: 's-typo', file: expect.any(String), reason: expect.stringMatching(/^runs\.0\.status: /) },
        ]);
        // Still there, still corrupt: nothing rewrote it.
        expect(isOneWorksError(await failure(store.readSession('s-typo')), 'state_corrupt')).toBe(true);
      });
    });

    describe('event log', () => {
      beforeEach(async () => {
        await store.writeSession(sessionRecord('s-1'));
      });

      it('appends batches and reads them back in seq order, after a given seq', async () => {
        await store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
        await store.appendEvents('s-1', [logEvent('s-1', 3)], { fsync: true });
        expect(await store.readEvents('s-1')).toEqual([logEvent('s-1', 1), logEvent('s-1', 2), logEvent('s-1', 3)]);
        expect((await store.readEvents('s-1', { afterSeq: 2 })).map((e) => e.seq)).toEqual([3]);
      });

      it('reads only the events of the types asked for, as a full read has them', async () => {
        const title: RuntimeEvent = {
          type: 'settings.changed',
          key: 'title:2',
          settings: { title: 'Agent title', titleSource: 'llm_generated' },
          sessionId: 's-1',
          seq: 2,
          at: '2025-01-01T00:00:00.000Z',
        };
        await store.appendEvents('s-1', [logEvent('s-1', 1), title, logEvent('s-1', 3)]);
        expect(await store.readEvents('s-1', { types: ['settings.changed'] })).toEqual([title]);
        expect((await store.readEvents('s-1', { types: ['log', 'settings.changed'], afterSeq: 1 })).map((e) => e.seq)).toEqual([2, 3]);
        expect(await store.readEvents('s-1', { types: ['session.closed'] })).toEqual([]);
      });

      it('keeps call order across concurrent appends', async () => {
        await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((seq) => store.appendEvents('s-1', [logEvent('s-1', seq)])));
        expect((await store.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      });

      it('reads an empty log when nothing was appended yet', async () => {
        expect(await store.readEvents('s-1')).toEqual([]);
        expect(await store.eventIndex('s-1')).toEqual({ keys: new Set(), lastSeq: 0 });
      });

      it('refuses events of another session or of no known type, and records none of the batch', async () => {
        const error = await failure(store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-2', 2)]));
        expect(isOneWorksError(error, 'internal')).toBe(true);
        const bogus = { ...logEvent('s-1', 1), type: 'bogus' } as unknown as RuntimeEvent;
        expect(isOneWorksError(await failure(store.appendEvents('s-1', [bogus])), 'internal')).toBe(true);
        expect(await store.readEvents('s-1')).toEqual([]);
      });

      it('continues seq and dedup keys in another store on the same state', async () => {
        await store.appendEvents('s-1', [logEvent('s-1', 1, 'tool:a'), logEvent('s-1', 2, 'tool:b')]);
        const reopened = await fixture.reopen();
        expect(await reopened.eventIndex('s-1')).toEqual({ keys: new Set(['tool:a', 'tool:b']), lastSeq: 2 });
        await reopened.appendEvents('s-1', [logEvent('s-1', 3, 'tool:c')]);
        expect((await store.eventIndex('s-1')).lastSeq).toBe(3);
        expect((await store.readEvents('s-1')).map((e) => e.key)).toEqual(['tool:a', 'tool:b', 'tool:c']);
      });

      it('keeps the logs of sessions apart', async () => {
        await store.writeSession(sessionRecord('s-2'));
        await store.appendEvents('s-1', [logEvent('s-1', 1)]);
        await store.appendEvents('s-2', [logEvent('s-2', 1), logEvent('s-2', 2)]);
        expect((await store.readEvents('s-1')).map((e) => e.sessionId)).toEqual(['s-1']);
        expect((await store.eventIndex('s-2')).lastSeq).toBe(2);
      });
    });

    describe('followEvents', () => {
      beforeEach(async () => {
        await store.writeSession(sessionRecord('s-1'));
      });

      it('yields recorded events after afterSeq, then new ones as they are appended', async () => {
        await store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
        const seen = await collect(store, 's-1', { afterSeq: 1 }, 3, async () => {
          await store.appendEvents('s-1', [logEvent('s-1', 3)]);
          await store.appendEvents('s-1', [logEvent('s-1', 4)]);
        });
        expect(seen.map((e) => e.seq)).toEqual([2, 3, 4]);
      });

      it('follows what another store on the same state appends, in order and without a gap', async () => {
        const writer = await fixture.reopen();
        const seen = await collect(store, 's-1', {}, 30, async () => {
          for (let seq = 1; seq <= 30; seq += 3) {
            await writer.appendEvents('s-1', [logEvent('s-1', seq), logEvent('s-1', seq + 1), logEvent('s-1', seq + 2)]);
          }
        });
        expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      });

      it('waits for a log that has no event yet', async () => {
        const seen = await collect(store, 's-1', {}, 1, () => store.appendEvents('s-1', [logEvent('s-1', 1)]));
        expect(seen).toEqual([logEvent('s-1', 1)]);
      });

      it('returns when the signal aborts', async () => {
        const abort = new AbortController();
        const iteration = (async () => {
          const seen: RuntimeEvent[] = [];
          for await (const event of store.followEvents('s-1', { signal: abort.signal })) seen.push(event);
          return seen;
        })();
        abort.abort();
        expect(await iteration).toEqual([]);
      });
    });

    describe('owner', () => {
      it('refuses a second owner with state_locked until the first releases', async () => {
        // This very process, alive: a second store cannot take it over as stale.
        const owner = ownerRecordOfThisProcess();
        const other = await fixture.reopen();
        expect(await store.acquireOwner(owner)).toEqual({ recovered: false });
        const error = await failure(other.acquireOwner(owner));
        expect(isOneWorksError(error, 'state_locked')).toBe(true);
        await store.releaseOwner();
        await store.releaseOwner();
        expect(await other.acquireOwner(owner)).toEqual({ recovered: false });
        await other.releaseOwner();
      });
    });

    describe('removeSession', () => {
      it('removes the record and the event log; a missing session is session_not_found', async () => {
        await store.writeSession(sessionRecord('s-1', { runs: [{ id: 'r-1', prompt: 'p', autonomy: 'low', status: 'completed' }] }));
        await store.writeSession(sessionRecord('s-2'));
        await store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
        expect(store.removeSession).toBeTypeOf('function');
        const remove = (id: string): Promise<number> => (store.removeSession as (id: string) => Promise<number>).call(store, id);
        expect(await remove('s-1')).toBeGreaterThan(0);
        expect(await store.hasSession('s-1')).toBe(false);
        expect(await store.readEvents('s-1')).toEqual([]);
        expect((await store.listSessions()).map((r) => r.id)).toEqual(['s-2']);
        expect(isOneWorksError(await failure(remove('s-1')), 'session_not_found')).toBe(true);
      });
    });
  });
}
