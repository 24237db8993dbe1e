import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loggedModules, ROOT } from '../support/module-log.js';

// Issue 15: a command that loads every adapter (`config check`, like doctor, adapters, models)
// loads the ACP SDK only when an ACP agent is probed or started, and the MCP SDK only when a
// harness starts its MCP servers: the adapters' modules themselves import neither. The command
// runs from the sources in a child whose module hooks log every module it loads.

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('loading every adapter', () => {
  it('loads every adapter module but neither the ACP nor the MCP SDK', async () => {
    const run = await loggedModules('ow-adapters-modules-', ['config', 'check']);
    dir = run.dir;
    const { result, loaded } = run;
    expect(result.exitCode, result.stderr).toBe(0);
    const ours = loaded.map((url) => fileURLToPath(url));
    // Every adapter's module was loaded (the command looks at all of them).
    for (const adapter of ['droid', 'claude-code', 'codex', 'process-runner', 'acp']) {
      expect(ours.some((path) => path === join(ROOT, 'adapters', adapter, 'index.ts'))).toBe(true);
    }
    expect(loaded.filter((url) => /@modelcontextprotocol|@agentclientprotocol/.test(url))).toEqual([]);
  });
});
