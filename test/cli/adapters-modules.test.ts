import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

// Issue 15: a command that loads every adapter (`config check`, like doctor, adapters, models)
// loads the ACP SDK only when an ACP agent is probed or started, and the MCP SDK only when a
// harness starts its MCP servers: the adapters' modules themselves import neither. The command
// runs from the sources in a child whose module hooks log every module it loads.
const FIXTURE = fileURLToPath(new URL('../fixtures/module-log/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('loading every adapter', () => {
  it('loads every adapter module but neither the ACP nor the MCP SDK', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ow-adapters-modules-'));
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, `state: { directory: ${join(dir, 'state')} }\n`);
    const logFile = join(dir, 'modules.log');
    const result = await execa(
      process.execPath,
      ['--import', 'tsx', '--import', join(FIXTURE, 'register.mjs'), join(FIXTURE, 'run-cli.ts'), '--config', config, 'config', 'check'],
      { cwd: ROOT, env: { MODULE_LOG_FILE: logFile }, reject: false, stdin: 'ignore' },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const loaded = (await readFile(logFile, 'utf8')).split('\n').filter((url) => url.startsWith('file:'));
    const ours = loaded.map((url) => fileURLToPath(url));
    // Every adapter's module was loaded (the command looks at all of them).
    for (const adapter of ['droid', 'claude-code', 'codex', 'process-runner', 'acp']) {
      expect(ours.some((path) => path === join(ROOT, 'adapters', adapter, 'index.ts'))).toBe(true);
    }
    expect(loaded.filter((url) => /@modelcontextprotocol|@agentclientprotocol/.test(url))).toEqual([]);
  });
});
