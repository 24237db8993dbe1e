import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { adapterModules, ROOT } from '../support/module-log.js';
import { untilServing, useServeChild } from '../support/serve-ready.js';

// Issue 15: an auto-started server (`serve --auto`, started by a command about to use it) loads
// the default adapter's code while that command connects, not once its first request arrived; no
// other adapter's. (A server started by hand does the same: run-modules.test.ts.)
const FIXTURE = fileURLToPath(new URL('../fixtures/module-log/', import.meta.url));
const READY_MS = 60_000;

const current = useServeChild();

describe('one-works serve --auto', () => {
  it('loads the default adapter (and no other) before any session needs it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-serve-auto-modules-'));
    current.dir = dir;
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, stringify({ state: { directory: join(dir, 'state') }, defaults: { adapter: 'codex' } }));
    const log = join(dir, 'modules.log');
    const serve = execa(
      process.execPath,
      ['--import', 'tsx', '--import', join(FIXTURE, 'register.mjs'), join(FIXTURE, 'run-cli.ts'), '--config', config, 'serve', '--auto'],
      { cwd: ROOT, env: { MODULE_LOG_FILE: log }, reject: false, stdin: 'ignore' },
    );
    current.server = serve;
    await untilServing(serve, READY_MS);
    let loaded: string[] = [];
    for (let waited = 0; waited < READY_MS; waited += 50) {
      loaded = adapterModules((await readFile(log, 'utf8')).split('\n'));
      if (loaded.includes('codex/index.ts')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(loaded).toContain('codex/index.ts');
    expect(loaded.filter((path) => !path.startsWith('codex/'))).toEqual([]);
  }, 120_000);
});
