import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { WorkerLease } from '../../../core/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../../core/store/postgres-store.js';
import { sql, startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.js';

// Worker leases on a real PostgreSQL. The requests they claim (routing, limits, expiry to
// `unknown`) are test/core/fleet/fleet-queue.test.ts and test/conformance/fleet-*.test.ts.

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

describe('worker leases', () => {
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
