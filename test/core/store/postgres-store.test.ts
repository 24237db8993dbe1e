import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isOneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { RequestKeyRegistry, requestKeyTable } from '../../../core/orchestrator/index.js';
import { POSTGRES_SCHEMA_VERSION, ownerRecordOfThisProcess, postgresUrlSecrets } from '../../../core/store/index.js';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../../../core/store/postgres-store.js';
import { sql, startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.js';
import { logEvent, sessionRecord, tempState } from './store-helpers.js';

// What the conformance suite cannot say about the PostgreSQL store: its schema versions, the
// owner lock of a crashed process, LISTEN/NOTIFY, a database restart, request keys, secrets.

let server: TestPostgres;
const opened: PostgresStore[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

afterAll(async () => {
  await server?.dispose();
});

async function open(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = await createPostgresStore(options);
  opened.push(store);
  return store;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

// Everything an error carries that could reach a person or a log.
function errorText(error: unknown): string {
  const { message, data, cause } = error as { message?: string; data?: unknown; cause?: unknown };
  return `${message ?? ''} ${JSON.stringify(data ?? null)} ${cause instanceof Error ? cause.message : JSON.stringify(cause ?? null)}`;
}

describe('schema versions', () => {
  it('migrates an empty database at start, once even when several processes start together', async () => {
    const url = await server.createDatabase();
    await Promise.all([open({ url }), open({ url }), open({ url })]);
    expect(await sql(url, 'SELECT version FROM one_works_schema')).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    const store = await open({ url });
    await store.writeSession(sessionRecord('s-1'));
    expect((await store.readSession('s-1')).id).toBe('s-1');
  });

  it('refuses a database whose schema is newer than the code with state_schema_newer, and changes nothing', async () => {
    const url = await server.createDatabase();
    const store = await open({ url });
    await store.writeSession(sessionRecord('s-kept'));
    const newer = POSTGRES_SCHEMA_VERSION + 1;
    await sql(url, 'UPDATE one_works_schema SET version = $1', [newer]);
    const error = await failure(createPostgresStore({ url }));
    expect(isOneWorksError(error, 'state_schema_newer')).toBe(true);
    expect((error as Error).message).toContain(
      `schema version ${newer}, newer than this One Works understands (${POSTGRES_SCHEMA_VERSION})`,
    );
    expect(await sql(url, 'SELECT version FROM one_works_schema')).toEqual([{ version: newer }]);
    expect(await sql(url, 'SELECT id FROM sessions')).toEqual([{ id: 's-kept' }]);
  });
});

describe('owner', () => {
  it('recovers the owner row of a process whose connection died (a crash), naming the previous owner', async () => {
    const url = await server.createDatabase();
    const crashed = await open({ url });
    const previous = { ...ownerRecordOfThisProcess(), pid: 999_999, startedAt: '2025-01-01T00:00:00.000Z' };
    await crashed.acquireOwner(previous);
    const next = await open({ url });
    expect(isOneWorksError(await failure(next.acquireOwner(ownerRecordOfThisProcess())), 'state_locked')).toBe(true);
    // The crash: PostgreSQL ends the owner's connection, and its advisory lock with it.
    await sql(url, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
    await expect
      .poll(async () => next.acquireOwner(ownerRecordOfThisProcess()).catch(() => undefined), { timeout: 10_000 })
      .toEqual({
        recovered: true,
        previous,
      });
  });
});

describe('followEvents on PostgreSQL', () => {
  it('wakes on NOTIFY, not on its poll: an append by another store arrives long before the poll interval', async () => {
    const url = await server.createDatabase();
    const follower = await open({ url, followPollMs: 600_000 });
    const writer = await open({ url });
    await writer.writeSession(sessionRecord('s-1'));
    const abort = new AbortController();
    const seen: RuntimeEvent[] = [];
    const reading = (async () => {
      for await (const event of follower.followEvents('s-1', { signal: abort.signal })) {
        seen.push(event);
        if (seen.length === 2) abort.abort();
      }
    })();
    await writer.appendEvents('s-1', [logEvent('s-1', 1)]);
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(1);
    // Once the follower's LISTEN connection is up, its 10-minute poll leaves only a NOTIFY to wake it.
    const listening = (): Promise<unknown[]> =>
      sql(
        url,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN one_works_events' AND state = 'idle'",
      );
    await expect.poll(async () => (await listening()).length, { timeout: 15_000 }).toBe(1);
    await writer.appendEvents('s-1', [logEvent('s-1', 2)]);
    await reading;
    expect(seen.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('refuses an event seq that is already recorded, keeping the first', async () => {
    const url = await server.createDatabase();
    const store = await open({ url });
    await store.appendEvents('s-1', [logEvent('s-1', 1, 'first')]);
    const error = await failure(store.appendEvents('s-1', [logEvent('s-1', 2), logEvent('s-1', 1, 'again')]));
    expect(isOneWorksError(error, 'internal')).toBe(true);
    expect((await store.readEvents('s-1')).map((e) => e.key)).toEqual(['first']);
  });
});

describe('request keys', () => {
  it('keeps claims across stores: a repeat in another process returns the first handle without making a new one', async () => {
    const url = await server.createDatabase();
    const handleSchema = z.object({ sessionId: z.string() });
    const first = await RequestKeyRegistry.open(requestKeyTable(await open({ url })), handleSchema, z.object({ sessionId: z.string() }));
    expect(await first.claim('key-1', { op: 'create', prompt: 'hi' }, async () => ({ sessionId: 's-1' }))).toEqual({ sessionId: 's-1' });
    const second = await RequestKeyRegistry.open(requestKeyTable(await open({ url })), handleSchema, z.object({ sessionId: z.string() }));
    let made = 0;
    const again = await second.claim('key-1', { op: 'create', prompt: 'hi' }, async () => {
      made += 1;
      return { sessionId: 's-2' };
    });
    expect(again).toEqual({ sessionId: 's-1' });
    expect(made).toBe(0);
    const conflict = await failure(second.claim('key-1', { op: 'create', prompt: 'other' }, async () => ({ sessionId: 's-3' })));
    expect(isOneWorksError(conflict, 'request_key_conflict')).toBe(true);
  });

  it('keeps a pending reservation for the next process to settle, and forgets it when removed', async () => {
    const url = await server.createDatabase();
    const store = await open({ url });
    const table = requestKeyTable(store);
    await table.save({ key: 'k', argsHash: 'a'.repeat(64), pending: { sessionId: 's-9' } });
    expect(await requestKeyTable(await open({ url })).load()).toEqual({ k: { argsHash: 'a'.repeat(64), pending: { sessionId: 's-9' } } });
    await table.save({ key: 'k', argsHash: 'a'.repeat(64), handle: { sessionId: 's-9' } });
    expect(await table.load()).toEqual({ k: { argsHash: 'a'.repeat(64), handle: { sessionId: 's-9' } } });
    await table.remove('k');
    expect(await table.load()).toEqual({});
  });
});

describe('removeSession', () => {
  it("also deletes the session's local folder (its HOME) under the state directory", async () => {
    const url = await server.createDatabase();
    const { stateDir, cleanup } = await tempState();
    try {
      const store = await open({ url, stateDir });
      await store.writeSession(sessionRecord('s-1'));
      const home = path.join(stateDir, 'sessions', 's-1', 'home');
      await mkdir(home, { recursive: true });
      await writeFile(path.join(home, 'big'), Buffer.alloc(10_000));
      expect(await store.removeSession('s-1')).toBeGreaterThanOrEqual(10_000);
      await expect(stat(path.join(stateDir, 'sessions', 's-1'))).rejects.toThrow(/ENOENT/);
    } finally {
      await cleanup();
    }
  });
});

describe('secrets and an unavailable database', () => {
  it('reports an unreachable database or a wrong password as state_unavailable, with no password anywhere in the error', async () => {
    const url = await server.createDatabase();
    const password = 'S3cret-Pass%2Fword';
    const wrongPassword = url.replace(server.password, password);
    const refused = await failure(createPostgresStore({ url: wrongPassword }));
    expect(isOneWorksError(refused, 'state_unavailable')).toBe(true);
    expect((refused as Error).message).toMatch(
      /^the state database 127\.0\.0\.1:\d+\/ow_[0-9a-f]+ cannot be used: password authentication failed/,
    );
    const closedPort = url.replace(`:${server.port}/`, ':1/').replace(server.password, password);
    const unreachable = await failure(createPostgresStore({ url: closedPort }));
    expect(isOneWorksError(unreachable, 'state_unavailable')).toBe(true);
    for (const error of [refused, unreachable]) {
      for (const secret of postgresUrlSecrets(wrongPassword)) expect(errorText(error)).not.toContain(secret);
      expect(errorText(error)).not.toContain('S3cret');
    }
  });

  it('names the URL and its password (raw and decoded) as secrets to redact', () => {
    const url = 'postgres://ow:p%40ss-w0rd@db.example:5433/fleet';
    expect(postgresUrlSecrets(url)).toEqual([url, 'p%40ss-w0rd', 'p@ss-w0rd']);
  });
});

// Last: it restarts the server under the other tests' feet otherwise.
describe('a database restart', () => {
  it('is a pause for a follower and for writers: nothing lost, nothing duplicated, in order', async () => {
    const url = await server.createDatabase();
    const follower = await open({ url, followPollMs: 200 });
    const writer = await open({ url });
    await writer.writeSession(sessionRecord('s-1'));
    const abort = new AbortController();
    const seen: RuntimeEvent[] = [];
    const reading = (async () => {
      for await (const event of follower.followEvents('s-1', { signal: abort.signal })) {
        seen.push(event);
        if (seen.length === 4) abort.abort();
      }
    })();
    await writer.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(2);
    await server.stop();
    const down = await failure(writer.appendEvents('s-1', [logEvent('s-1', 3)]));
    expect(isOneWorksError(down, 'state_unavailable')).toBe(true);
    await server.start();
    // The failed append recorded nothing: the writer appends seq 3 again, once the database is back.
    await expect
      .poll(
        () =>
          writer.appendEvents('s-1', [logEvent('s-1', 3)]).then(
            () => true,
            () => false,
          ),
        { timeout: 30_000 },
      )
      .toBe(true);
    await writer.appendEvents('s-1', [logEvent('s-1', 4)]);
    await reading;
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect((await writer.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  }, 90_000);
});
