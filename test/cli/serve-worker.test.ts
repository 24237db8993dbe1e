import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { EXIT } from '../../cli/exit-codes.js';
import { startOneWorks } from '../support/one-works-cli.js';

// `serve --worker` refuses what cannot be a fleet worker, before it touches anything.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function withConfig(state: Record<string, unknown>): Promise<{ root: string; config: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-worker-')));
  roots.push(root);
  const config = join(root, 'one-works.yaml');
  await writeFile(config, stringify({ state: { directory: join(root, 'state'), ...state }, workspaces: { approved: [root] } }));
  return { root, config };
}

describe('serve --worker', () => {
  it('needs state.backend postgres: a clear config_invalid (exit 2) otherwise', async () => {
    const { root, config } = await withConfig({});
    const result = await startOneWorks(['--config', config, 'serve', '--worker', 'w-1'], { cwd: root, env: { HOME: root } }).result;
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('state.backend: postgres');
    expect(result.stderr).toContain('serve --worker runs a worker of a fleet');
  }, 60_000);

  it('refuses a bad worker name, and --auto with --worker', async () => {
    const { root, config } = await withConfig({});
    const bad = await startOneWorks(['--config', config, 'serve', '--worker', '../x'], { cwd: root, env: { HOME: root } }).result;
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--worker: a name of letters');
    const auto = await startOneWorks(['--config', config, 'serve', '--worker', 'w', '--auto'], { cwd: root, env: { HOME: root } }).result;
    expect(auto.exitCode).toBe(2);
    expect(auto.stderr).toContain('--worker takes neither');
  }, 60_000);

  it('a database that cannot be reached is state_unavailable (the state exit code), and its password is never printed', async () => {
    const { root, config } = await withConfig({ backend: 'postgres', postgres: { url: '${DB_URL}' } });
    const url = 'postgres://fleet:pw-7c1d9e@127.0.0.1:1/none';
    const result = await startOneWorks(['--config', config, 'serve', '--worker', 'w-1'], {
      cwd: root,
      env: { HOME: root, DB_URL: url },
    }).result;
    expect(result.exitCode).toBe(EXIT.state);
    expect(result.stderr).toContain('cannot be used');
    expect(result.stderr).toContain('127.0.0.1:1/none');
    expect(result.stderr).not.toContain('pw-7c1d9e');
  }, 60_000);
});
