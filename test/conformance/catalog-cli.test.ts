import { findProcesses } from '../support/rig-processes.js';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

// `one-works models` / `one-works tools` through cli/bin.js, against the real droid 0.225.2
// (installed by the conformance global setup). The droid is reached through a wrapper script
// that logs each start, so "no droid started" is checked by counting, not by timing.

const ONE_WORKS_BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));
const SECRET = 'sk-catalog-conformance-5e1f0a77';
const BYOK_ID = 'custom:Catalog-BYOK-0';

let realDroid: string;
beforeAll(() => {
  const binary = process.env.ONE_WORKS_TEST_DROID;
  if (!binary)
    throw new Error('ONE_WORKS_TEST_DROID is not set: run this file in the vitest conformance project (its global setup installs droid)');
  realDroid = binary;
});

interface Rig {
  root: string;
  catalogDir: string;
  tmp: string;
  run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** How many times droid was started as an agent (stream-jsonrpc), not for `--version`. */
  droidStarts(): Promise<number>;
}

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) {
    const leftovers = processesMentioning(root);
    for (const pid of leftovers) process.kill(pid, 'SIGKILL');
    await rm(root, { recursive: true, force: true });
    expect(leftovers).toEqual([]);
  }
});

async function createRig(): Promise<Rig> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-catalog-conf-')));
  roots.push(root);
  const [bin, workspace, userHome, tmp] = ['bin', 'ws', 'home', 'tmp'].map((name) => join(root, name)) as [string, string, string, string];
  await Promise.all([bin, workspace, userHome, tmp].map((dir) => mkdir(dir)));
  const startsLog = join(root, 'droid-starts.log');
  const wrapper = join(bin, 'droid');
  await writeFile(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${startsLog}'\nexec '${realDroid}' "$@"\n`);
  await chmod(wrapper, 0o755);
  const config = {
    state: { directory: join(root, 'state') },
    cache: { directory: join(root, 'cache') },
    workspaces: { approved: [workspace] },
    adapters: {
      droid: {
        cli: { source: 'path', path: wrapper },
        model: BYOK_ID,
        env: { FACTORY_AIRGAP_ENABLED: 'true' },
        customModels: [
          {
            model: 'catalog-byok',
            displayName: 'Catalog BYOK',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: SECRET,
            provider: 'generic-chat-completion-api',
          },
          { model: 'thinker', baseUrl: 'http://127.0.0.1:9/v1', apiKey: SECRET, provider: 'openai', reasoningEffort: 'high' },
        ],
      },
    },
  };
  const configPath = join(root, 'one-works.yaml');
  await writeFile(configPath, stringify(config));
  return {
    root,
    catalogDir: join(root, 'cache', 'catalog'),
    tmp,
    run: async (args) => {
      const result = await execa(process.execPath, [ONE_WORKS_BIN, '--config', configPath, ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: userHome, TMPDIR: tmp },
        extendEnv: false,
        stdin: 'ignore',
        reject: false,
        timeout: 120_000,
      });
      if (result.exitCode === undefined || result.timedOut) throw new Error(`one-works ${args.join(' ')} did not exit: ${result.stderr}`);
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    },
    droidStarts: async () =>
      (await readFile(startsLog, 'utf8').catch(() => '')).split('\n').filter((line) => line.includes('stream-jsonrpc')).length,
  };
}

// Live processes whose argv, cwd or environment mention `needle` (Linux /proc), this one excluded.
function processesMentioning(needle: string): number[] {
  return findProcesses(needle).map((p) => p.pid);
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

interface ModelsJson {
  fromCache: boolean;
  models: { id: string; custom: boolean; deprecated: boolean; disabled: boolean; efforts: string[]; provider?: string }[];
}

const lastJson = <T>(stdout: string): T => JSON.parse(stdout.trim().split('\n').at(-1)!) as T;

describe('one-works models and tools against the real droid', () => {
  it('lists the BYOK model marked custom, keeps its key out of output and cache, and serves a second call from the cache', async () => {
    const rig = await createRig();
    const first = await rig.run(['--json', 'models']);
    expect(first.exitCode, first.stderr).toBe(0);
    const listed = lastJson<ModelsJson>(first.stdout);
    expect(listed.fromCache).toBe(false);
    expect(listed.models.find((m) => m.id === BYOK_ID)).toMatchObject({
      custom: true,
      efforts: ['none'],
      provider: 'generic-chat-completion-api',
    });
    // A BYOK entry with a reasoningEffort gets effort levels (droid 0.225.2: off|low|medium|high).
    expect(listed.models.find((m) => m.id === 'custom:thinker-0')).toMatchObject({
      custom: true,
      efforts: expect.arrayContaining(['low', 'high']),
    });
    expect(listed.models.every((m) => !m.deprecated && !m.disabled)).toBe(true);
    expect(await rig.droidStarts()).toBe(1);

    const files = await filesUnder(join(rig.root, 'cache'));
    expect(files.map((f) => f.slice(rig.catalogDir.length + 1))).toEqual([expect.stringMatching(/^droid-[0-9a-f]{16}\.json$/)]);
    const entry = files[0]!;
    for (const text of [first.stdout, first.stderr, ...(await Promise.all(files.map((f) => readFile(f, 'utf8'))))])
      expect(text).not.toContain(SECRET);
    const before = await stat(entry);
    expect(before.mode & 0o777).toBe(0o600);
    const content = await readFile(entry, 'utf8');
    expect((await readdir(rig.tmp)).filter((name) => name.startsWith('one-works-'))).toEqual([]);

    const second = await rig.run(['--json', 'models']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(lastJson<ModelsJson>(second.stdout)).toEqual({ ...listed, fromCache: true });
    expect(await rig.droidStarts()).toBe(1);
    const after = await stat(entry);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(await readFile(entry, 'utf8')).toBe(content);

    const all = lastJson<ModelsJson>((await rig.run(['--json', 'models', '--all'])).stdout);
    expect(all.models.length).toBeGreaterThanOrEqual(listed.models.length);
    for (const hidden of all.models.filter((m) => !listed.models.some((l) => l.id === m.id)))
      expect(hidden.deprecated || hidden.disabled).toBe(true);

    const refreshed = await rig.run(['--json', 'models', '--refresh']);
    expect(lastJson<ModelsJson>(refreshed.stdout).fromCache).toBe(false);
    expect(await rig.droidStarts()).toBe(2);
  });

  it('lists the tools of the configured model, Execute and Read among them', async () => {
    const rig = await createRig();
    const result = await rig.run(['--json', 'tools']);
    expect(result.exitCode, result.stderr).toBe(0);
    const { tools } = lastJson<{ tools: { id: string; category?: string; allowed?: boolean }[] }>(result.stdout);
    expect(tools.find((t) => t.id === 'Execute')).toMatchObject({ category: 'execute', allowed: true });
    expect(tools.find((t) => t.id === 'Read')).toMatchObject({ category: 'read', allowed: true });
    // Listed at the configured One Works autonomy (low by default), where droid's own view allows
    // edits; sessions run droid at off, which offers the model the same tools (docs/droid-adapter.md).
    expect(tools.find((t) => t.id === 'Edit')).toMatchObject({ category: 'edit', allowed: true });
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    // `models` shares the entry: tools were listed for the configured model in the same session.
    expect(lastJson<ModelsJson>((await rig.run(['--json', 'models'])).stdout).fromCache).toBe(true);
    expect(await rig.droidStarts()).toBe(1);
  });

  it('refuses tools for a model droid does not list, naming `one-works models`', async () => {
    const rig = await createRig();
    const result = await rig.run(['--json', 'tools', '--model', 'custom:Catalog-BYOK-9']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('model custom:Catalog-BYOK-9 is not available; available include custom:Catalog-BYOK-0');
    expect(result.stderr).toContain('`one-works models` shows all');
    expect(result.stdout).toBe('');
  });
});
