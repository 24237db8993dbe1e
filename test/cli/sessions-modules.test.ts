import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

// README: `sessions` loads no adapter code. The command runs from the sources in a child whose
// module hooks log every module it loads; only the adapters' config schemas (one-works.yaml is
// validated whole) may come from adapters/, and none of the adapters' SDKs.
const FIXTURE = fileURLToPath(new URL('../fixtures/module-log/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('one-works sessions', () => {
  it('loads no adapter code: no adapter module but the config schemas, no MCP or ACP SDK', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ow-sessions-modules-'));
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, `state: { directory: ${join(dir, 'state')} }\n`);
    const logFile = join(dir, 'modules.log');
    const result = await execa(
      process.execPath,
      ['--import', 'tsx', '--import', join(FIXTURE, 'register.mjs'), join(FIXTURE, 'run-cli.ts'), '--config', config, 'sessions'],
      { cwd: ROOT, env: { MODULE_LOG_FILE: logFile }, reject: false, stdin: 'ignore' },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/no sessions yet/);
    const loaded = (await readFile(logFile, 'utf8')).split('\n').filter((url) => url.startsWith('file:'));
    const ours = loaded.map((url) => fileURLToPath(url)).filter((path) => path.startsWith(ROOT) && !path.includes('/node_modules/'));
    // The log sees the command itself load: cli/ and core/ modules are there.
    expect(ours.some((path) => path.endsWith('/cli/commands/sessions.ts'))).toBe(true);
    const adapterModules = ours.filter((path) => path.startsWith(join(ROOT, 'adapters/')));
    expect(adapterModules.filter((path) => !path.endsWith('/config.ts'))).toEqual([]);
    expect(loaded.filter((url) => /@modelcontextprotocol|@agentclientprotocol/.test(url))).toEqual([]);
  });
});
