import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POSTGRES_SCHEMA_VERSION } from '../../core/store/index.js';
import { writeFakeDroidBinary } from '../peers/fake-droid-binary.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';
import { startTestPostgres, type TestPostgres } from '../support/embedded-postgres.js';

// doctor with state.backend: postgres, against a real PostgreSQL: whether the database answers
// and its schema version, read-only, and never the URL's password.

let server: TestPostgres;
let box: CliSandbox;

beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});
beforeEach(async () => {
  box = await createCliSandbox({ privateTmp: true });
});
afterEach(async () => {
  await box.remove();
});

async function configure(): Promise<void> {
  const dir = join(box.root, 'fake');
  await mkdir(dir);
  const binary = await writeFakeDroidBinary(dir, {});
  await box.writeConfig(
    [
      'state:',
      `  directory: ${join(box.root, 'state')}`,
      '  backend: postgres',
      '  postgres:',
      '    url: ${OW_TEST_DATABASE_URL}',
      `cache:\n  directory: ${join(box.root, 'cache')}`,
      `adapters:\n  droid:\n    cli:\n      source: path\n      path: ${binary}\n      version: 0.225.2`,
      '',
    ].join('\n'),
  );
}

function databaseLine(stdout: string): string | undefined {
  return stdout.split('\n').find((line) => line.includes('state database:'));
}

describe('one-works doctor with the postgres backend', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('reports a database that answers and its schema version, and changes nothing in it', async () => {
    const url = await server.createDatabase();
    await configure();
    const result = await box.run(['doctor'], { OW_TEST_DATABASE_URL: url });
    const where = `127.0.0.1:${server.port}/${url.split('/').pop()}`;
    expect(databaseLine(result.stdout)).toBe(
      `ok    state database: ${where} answers, schema version 0 (this One Works: ${POSTGRES_SCHEMA_VERSION}, migrated at start)`,
    );
    expect(result.stdout + result.stderr).not.toContain(server.password);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    await client.end();
    expect(tables.rows).toEqual([]);
  });

  it('fails with exit 6 when the database cannot be reached, without the password', async () => {
    await configure();
    const url = `postgres://postgres:${server.password}@127.0.0.1:1/none`;
    const result = await box.run(['doctor'], { OW_TEST_DATABASE_URL: url });
    expect(result.exitCode).toBe(6);
    expect(databaseLine(result.stdout)).toMatch(/^FAIL {2}state database: the state database 127\.0\.0\.1:1\/none cannot be used: /);
    expect(result.stdout + result.stderr).not.toContain(server.password);
  });
});
