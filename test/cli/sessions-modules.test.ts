import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loggedModules, ROOT } from '../support/module-log.js';

// README: `sessions` loads no adapter code. The command runs from the sources in a child whose
// module hooks log every module it loads; only the adapters' config schemas (one-works.yaml is
// validated whole) may come from adapters/, and none of the adapters' SDKs.

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('one-works sessions', () => {
  it('loads no adapter code: no adapter module but the config schemas, no MCP or ACP SDK', async () => {
    const run = await loggedModules('ow-sessions-modules-', ['sessions']);
    dir = run.dir;
    const { result, loaded } = run;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/no sessions yet/);
    const ours = loaded.map((url) => fileURLToPath(url)).filter((path) => path.startsWith(ROOT) && !path.includes('/node_modules/'));
    // The log sees the command itself load: cli/ and core/ modules are there.
    expect(ours.some((path) => path.endsWith('/cli/commands/sessions.ts'))).toBe(true);
    const adapterModules = ours.filter((path) => path.startsWith(join(ROOT, 'adapters/')));
    expect(adapterModules.filter((path) => !path.endsWith('/config.ts'))).toEqual([]);
    expect(loaded.filter((url) => /@modelcontextprotocol|@agentclientprotocol/.test(url))).toEqual([]);
  });
});
