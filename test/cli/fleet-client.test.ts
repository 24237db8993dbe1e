import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, type CliSandbox } from '../support/cli-runner.js';
import { startTestPostgres, type TestPostgres } from '../support/embedded-postgres.js';

// The fleet's client commands with state.backend: postgres and NO worker running, against a
// real PostgreSQL: a submitted session waits in the queue (listed `queued`, counted by `fleet`,
// waited on, cancelled), no local orchestrator is started, and the database URL (its password)
// appears in no output. The commands with real workers: test/cli/fleet-e2e.test.ts.

const RUNNER = fileURLToPath(new URL('../peers/echo-runner.mjs', import.meta.url));

let server: TestPostgres;
let box: CliSandbox;
let url: string;

beforeAll(async () => {
  server = await startTestPostgres();
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});
beforeEach(async () => {
  box = await createCliSandbox();
  url = await server.createDatabase();
  await box.writeConfig(
    [
      'state:',
      `  directory: ${box.root}/state`,
      '  backend: postgres',
      '  postgres:',
      '    url: ${OW_TEST_DATABASE_URL}',
      'defaults:',
      '  adapter: process:echo',
      'adapters:',
      '  process:',
      '    harnesses:',
      `      echo: { command: ${process.execPath}, args: [${RUNNER}] }`,
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  await box.remove();
});

function cli(args: string[]) {
  return box.run(args, { OW_TEST_DATABASE_URL: url });
}

describe('fleet client commands without a worker', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('submit queues the session; sessions, fleet, wait, events and cancel see it in the queue; nothing leaks the URL', async () => {
    const submitted = await cli(['submit', 'hello fleet', '--json']);
    expect(submitted.exitCode, submitted.stderr).toBe(0);
    const queued = JSON.parse(submitted.stdout) as { sessionId: string; requestId: number; state: string };
    expect(queued).toMatchObject({ state: 'queued', sessionId: expect.stringMatching(/^s-[0-9a-f]{10}$/) });
    expect(submitted.stderr).toContain(`session ${queued.sessionId} is queued in the fleet: no worker took it`);
    const id = queued.sessionId;

    const listed = await cli(['sessions', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      sessionId: id,
      status: 'queued',
      adapter: 'process:echo',
      workspace: box.cwd,
      runs: 0,
    });
    const text = await cli(['sessions']);
    expect(text.stdout).toMatch(new RegExp(`^${id}  process:echo  queued `, 'm'));

    const fleet = await cli(['fleet', '--json']);
    expect(fleet.exitCode, fleet.stderr).toBe(0);
    expect(JSON.parse(fleet.stdout)).toMatchObject({ workers: [], queue: { queued: 1, claimed: 0 }, waitingOnLostWorkers: [] });
    expect((await cli(['fleet'])).stdout).toContain('no workers yet');

    const waited = await cli(['wait', id, '--timeout', '1', '--json']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      timedOut: true,
      settled: [],
      pending: [{ sessionId: id, state: 'working', queueDepth: 1 }],
    });

    const events = await cli(['events', id]);
    expect(events).toMatchObject({ exitCode: 0, stdout: '' });

    // A send to the queued create queues behind it (FIFO per session).
    const more = await cli(['send-queued', id, 'and then this', '--json']);
    expect(more.exitCode, more.stderr).toBe(0);
    expect(JSON.parse(more.stdout)).toMatchObject({ sessionId: id, state: 'queued' });

    const cancelled = await cli(['cancel', id, '--json']);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ sessionId: id, state: 'closed', queueDepth: 0 });
    // Cancelled before any worker took them: both rows are cancelled, never to run; no session remains.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT op, state FROM queue WHERE session_id = $1 ORDER BY id', [id]);
      expect(rows).toEqual([
        { op: 'create', state: 'cancelled' },
        { op: 'send', state: 'cancelled' },
      ]);
    } finally {
      await db.end();
    }
    expect((await cli(['sessions'])).stdout).toBe('no sessions yet');
    const gone = await cli(['events', id]);
    expect(gone.exitCode).toBe(2);
    expect(gone.stderr).toContain(`no session ${id}`);

    // No local orchestrator was started or reached: no socket in the state directory.
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${box.root}/state/orchestrator.sock`)).toBe(false);
    for (const run of [submitted, listed, text, fleet, waited, events, cancelled, gone]) {
      expect(run.stdout + run.stderr).not.toContain(server.password);
    }
  });

  it('commands that need a host refuse with usage naming the backend; a send to an unknown session is session_not_found', async () => {
    for (const args of [
      ['fork', 's-0123456789'],
      ['asks', 's-0123456789'],
      ['sessions', 'rm', 's-0123456789'],
      ['server', 'status'],
    ]) {
      const result = await cli(args);
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain('not available with state.backend postgres');
      expect(result.stdout + result.stderr).not.toContain(server.password);
    }
    const send = await cli(['send-queued', 's-0123456789', 'more']);
    expect(send.exitCode).toBe(2);
    expect(send.stderr).toContain('no session s-0123456789');
  });

  it('a request key makes a repeated submit the same session (one queued request); other arguments are a conflict', async () => {
    const first = await cli(['submit', 'keyed', '--request-key', 'k-1', '--json']);
    const again = await cli(['submit', 'keyed', '--request-key', 'k-1', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(again.exitCode, again.stderr).toBe(0);
    const id = (JSON.parse(first.stdout) as { sessionId: string }).sessionId;
    expect(JSON.parse(again.stdout)).toMatchObject({ sessionId: id, state: 'queued' });
    const other = await cli(['submit', 'something else', '--request-key', 'k-1']);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain('request key k-1 was used with other arguments');
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      expect((await db.query('SELECT session_id FROM queue')).rows).toEqual([{ session_id: id }]);
    } finally {
      await db.end();
    }
  });
});
