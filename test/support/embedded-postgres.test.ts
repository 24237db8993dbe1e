import { connect } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from './embedded-postgres.js';

// Whether something accepts TCP connections on 127.0.0.1:port.
async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startTestPostgres', () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startTestPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.dispose();
  });

  it('serves a real PostgreSQL on 127.0.0.1 with a password, a fresh database per call', async () => {
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ addr: string; version: string; db: string }>(
        'SELECT host(inet_server_addr()) AS addr, current_setting($1) AS version, current_database() AS db',
        ['server_version_num'],
      );
      expect(rows[0]?.addr).toBe('127.0.0.1');
      expect(Number(rows[0]?.version)).toBeGreaterThanOrEqual(180000);
      expect(url.endsWith(`/${rows[0]?.db}`)).toBe(true);
    } finally {
      await client.end();
    }
    const wrong = new pg.Client({ connectionString: url.replace(server.password, 'wrong') });
    await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
  });

  it('stops and starts again with its data; dispose leaves no process and no listening port', async () => {
    const url = await server.createDatabase();
    const write = new pg.Client({ connectionString: url });
    await write.connect();
    await write.query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
    await write.end();
    const pid = server.pid();
    expect(pid).toBeTypeOf('number');
    await server.stop();
    expect(alive(pid as number)).toBe(false);
    expect(await listening(server.port)).toBe(false);
    await server.start();
    const read = new pg.Client({ connectionString: url });
    await read.connect();
    expect((await read.query<{ n: number }>('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
    await read.end();
    const second = server.pid() as number;
    await server.dispose();
    expect(alive(second)).toBe(false);
    expect(await listening(server.port)).toBe(false);
  });
});
