import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ROOT } from '../support/module-log.js';
import { untilServing, useServeChild } from '../support/serve-ready.js';

// Issue 15: the orchestrator parses with zod's JIT off, as `run` and `send` do
// (cli/schema-compilation.ts): compiling a parser per object schema on its first parse put some
// 30 ms of CPU on a fresh orchestrator's first turn, while its agent starts. Observed from the
// process itself: a preload notes every `new Function` zod calls. A recorded session makes the
// start-up parse a record (crash recovery), which zod's JIT would compile.
const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const READY_MS = 60_000;

const current = useServeChild();

const RECORD = {
  id: 's-0123456789',
  adapter: 'droid',
  workspace: '/nonexistent/ws',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
  status: 'idle',
  runs: [
    {
      id: 'r1',
      prompt: 'hello',
      autonomy: 'low',
      status: 'completed',
      reason: 'completed',
      startedAt: '2026-01-01T00:00:00.500Z',
      endedAt: '2026-01-01T00:00:01.000Z',
      text: 'hi',
      usage: { reported: false },
    },
  ],
};

describe('one-works serve', () => {
  it('compiles no zod parser: its schemas parse without the JIT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-serve-codegen-'));
    current.dir = dir;
    const state = join(dir, 'state');
    await mkdir(join(state, 'sessions', RECORD.id), { recursive: true, mode: 0o700 });
    await writeFile(join(state, 'sessions', RECORD.id, 'session.json'), `${JSON.stringify(RECORD, null, 2)}\n`, { mode: 0o600 });
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, stringify({ state: { directory: state } }));
    const log = join(dir, 'codegen.log');
    await writeFile(log, '');
    const serve = execa(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        join(FIXTURES, 'code-generation', 'count.mjs'),
        join(FIXTURES, 'module-log', 'run-cli.ts'),
        '--config',
        config,
        'serve',
      ],
      { cwd: ROOT, env: { CODEGEN_LOG_FILE: log }, reject: false, stdin: 'ignore' },
    );
    current.server = serve;
    await untilServing(serve, READY_MS);
    serve.kill('SIGTERM');
    const exit = await serve;
    current.server = undefined;
    expect(exit.exitCode).toBe(0);
    // Recovery read the record (a malformed one would have been named on stderr).
    expect(exit.stderr).not.toContain('is malformed');
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual([]);
  }, 120_000);
});
