import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ROOT } from '../support/module-log.js';

// Issue 15: `sessions` parses with zod's JIT off, as run, send and serve do
// (cli/schema-compilation.ts): it parses each record and the events of untitled sessions once,
// so compiling a parser per object schema on its first parse cost more than it saved. Observed
// from the process itself: a preload notes every `new Function` zod calls.
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const ID = 's-0123456789';

const RECORD = {
  id: ID,
  adapter: 'droid',
  workspace: '/nonexistent/ws',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
  status: 'idle',
  runs: [{ id: 'r1', prompt: 'hello', autonomy: 'low', status: 'completed', reason: 'completed', text: 'hi', usage: { reported: false } }],
};
const stamp = (seq: number) => ({ sessionId: ID, seq, at: '2026-01-01T00:00:01.000Z' });
// The agent's titles come late in a long log (the last one counts): `sessions` reads every line.
const OTHERS = 2000;
const EVENTS = [
  { type: 'turn.queued', key: 'turn:r1:queued', runId: 'r1', prompt: 'hello', ...stamp(1) },
  { type: 'settings.changed', key: 'title:a', settings: { title: 'First title', titleSource: 'first_user_message' }, ...stamp(2) },
  ...Array.from({ length: OTHERS }, (_, i) => ({ type: 'working.changed', key: `working:${i}`, state: 'thinking', ...stamp(3 + i) })),
  { type: 'settings.changed', key: 'title:b', settings: { title: 'Agent title', titleSource: 'llm_generated' }, ...stamp(OTHERS + 3) },
  {
    type: 'turn.completed',
    key: 'turn:r1:completed',
    runId: 'r1',
    outcome: { status: 'completed', reason: 'completed', text: 'hi', usage: { reported: false } },
    ...stamp(OTHERS + 4),
  },
];

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('one-works sessions', () => {
  it("lists a recorded session with its agent's last title, far into its log, and compiles no zod parser", async () => {
    dir = await mkdtemp(join(tmpdir(), 'ow-sessions-codegen-'));
    const state = join(dir, 'state');
    await mkdir(join(state, 'sessions', ID), { recursive: true, mode: 0o700 });
    await writeFile(join(state, 'sessions', ID, 'session.json'), `${JSON.stringify(RECORD, null, 2)}\n`, { mode: 0o600 });
    await writeFile(join(state, 'sessions', ID, 'events.jsonl'), EVENTS.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, stringify({ state: { directory: state } }));
    const log = join(dir, 'codegen.log');
    await writeFile(log, '');
    const result = await execa(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        join(FIXTURES, 'code-generation', 'count.mjs'),
        join(FIXTURES, 'module-log', 'run-cli.ts'),
        '--config',
        config,
        '--json',
        'sessions',
      ],
      { cwd: ROOT, env: { CODEGEN_LOG_FILE: log }, reject: false, stdin: 'ignore' },
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sessionId: ID, title: 'Agent title', titleSource: 'agent', runs: 1 });
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual([]);
  }, 60_000);
});
