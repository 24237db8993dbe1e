import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../../core/store/postgres-store.js';
import { startTestPostgres, type TestPostgres } from '../../support/embedded-postgres.js';
import { describeStoreConformance } from './store-conformance.js';

// One PostgreSQL server for the file, one fresh database per test.
let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});

describeStoreConformance({
  name: 'postgres',
  open: async () => {
    const url = await server.createDatabase();
    const opened: PostgresStore[] = [];
    const open = async (): Promise<PostgresStore> => {
      const store = await createPostgresStore({ url });
      opened.push(store);
      return store;
    };
    const store = await open();
    return {
      store,
      reopen: open,
      putRawRecord: async (sessionId, value) => {
        const { runs, ...rest } = value as { runs?: unknown[]; createdAt?: string };
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query('INSERT INTO sessions (id, created_at, record) VALUES ($1, $2, $3)', [
            sessionId,
            rest.createdAt ?? '',
            JSON.stringify(rest),
          ]);
          for (const [ordinal, run] of (runs ?? []).entries()) {
            await client.query("INSERT INTO runs (session_id, ordinal, id, status, record) VALUES ($1, $2, 'raw', 'raw', $3)", [
              sessionId,
              ordinal,
              JSON.stringify(run),
            ]);
          }
        } finally {
          await client.end();
        }
      },
      cleanup: async () => {
        await Promise.all(opened.map((store) => store.close()));
      },
    };
  },
});
