import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { createConfigSchema, loadConfig } from '../../../core/config/index.js';
import { isOneWorksError } from '../../../core/errors.js';

const schema = createConfigSchema({ droid: DroidConfigSchema });

let root: string;
let cwd: string;
let xdgConfig: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'one-works-config-'));
  cwd = join(root, 'project');
  xdgConfig = join(root, 'xdg-config');
  await mkdir(cwd);
  await mkdir(join(xdgConfig, 'one-works'), { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('loadConfig', () => {
  it('tells the keys the file sets from the values the schema filled in', async () => {
    const text = 'workspaces:\n  approved: [/srv/a, { path: /srv/b, isolation: worktree }]\nadapters:\n  droid:\n    effort: high\n';
    await writeFile(join(cwd, 'one-works.yaml'), text);
    const loaded = await loadConfig({ schema, cwd, env: { HOME: '/h' } });
    expect(loaded.config.adapters.droid.effort).toBe('high');
    expect(loaded.config.workspaces.approved).toEqual(['/srv/a', { path: '/srv/b', isolation: 'worktree' }]);
    expect([...loaded.explicitKeys].sort()).toEqual([
      'adapters',
      'adapters.droid',
      'adapters.droid.effort',
      'workspaces',
      'workspaces.approved',
    ]);
    await writeFile(join(cwd, 'one-works.yaml'), 'adapters:\n  droid:\n    autonomy: low\n');
    const defaulted = await loadConfig({ schema, cwd, env: { HOME: '/h' } });
    expect(defaulted.config.adapters.droid.effort).toBe('high');
    expect(defaulted.explicitKeys.has('adapters.droid.effort')).toBe(false);
  });

  it('returns the defaults with source none when no file exists', async () => {
    const env = { HOME: '/home/tester', XDG_CONFIG_HOME: xdgConfig };
    const loaded = await loadConfig({ schema, cwd, env });
    expect(loaded.source).toBe('none');
    expect(loaded.path).toBeUndefined();
    expect(loaded.config.state.directory).toBe('/home/tester/.local/state/one-works');
    expect(loaded.config.cache.directory).toBe('/home/tester/.cache/one-works');
    expect(loaded.config.workspaces.approved).toEqual([]);
    expect(loaded.config.orchestrator).toEqual({
      maxConcurrentRuns: 4,
      maxQueuedTotal: 64,
      maxQueuedPerSession: 8,
      cancelGraceMs: 5000,
      runTimeoutMs: 3_600_000,
      idleExitMs: 600_000,
      askTimeoutMs: 600_000,
      keepWarmMs: 300_000,
      maxWarmAgents: 4,
      maxWarmMemoryMb: 2048,
      prewarm: 0,
      workerLeaseMs: 15_000,
    });
    expect(loaded.config.sandbox).toBe('none');
    expect(loaded.config.adapters.droid).toEqual({
      enabled: true,
      cli: { source: 'managed', version: '0.225.2', range: '>=0.225.0 <0.226.0' },
      model: 'inherit',
      effort: 'high',
      autonomy: 'low',
      customModels: [],
      configContent: {},
      env: {},
      credentials: {},
      startupTimeoutMs: 30_000,
      requestTimeoutMs: 30_000,
      drainFallbackMs: 3000,
      interruptGraceMs: 5000,
      fallback: 'oneshot',
      rules: [],
      skills: [],
      disableBuiltinSkills: false,
      mcpServers: {},
      hooks: {},
      plugins: [],
    });
  });

  it('follows XDG_STATE_HOME and XDG_CACHE_HOME when they are absolute, and ignores relative ones', async () => {
    const absolute = await loadConfig({
      schema,
      cwd,
      env: { HOME: '/h', XDG_CONFIG_HOME: xdgConfig, XDG_STATE_HOME: '/s', XDG_CACHE_HOME: '/c' },
    });
    expect([absolute.config.state.directory, absolute.config.cache.directory]).toEqual(['/s/one-works', '/c/one-works']);
    const relative = await loadConfig({ schema, cwd, env: { HOME: '/h', XDG_CONFIG_HOME: xdgConfig, XDG_STATE_HOME: 'rel' } });
    expect(relative.config.state.directory).toBe('/h/.local/state/one-works');
  });

  it('prefers ./one-works.yaml over the user config', async () => {
    await writeFile(join(cwd, 'one-works.yaml'), 'sandbox: bwrap\n');
    await writeFile(join(xdgConfig, 'one-works', 'one-works.yaml'), 'sandbox: none\n');
    const loaded = await loadConfig({ schema, cwd, env: { XDG_CONFIG_HOME: xdgConfig } });
    expect(loaded).toMatchObject({ source: 'file', path: join(cwd, 'one-works.yaml') });
    expect(loaded.config.sandbox).toBe('bwrap');
  });

  it('falls back to $XDG_CONFIG_HOME/one-works/one-works.yaml and names it absolutely in errors', async () => {
    const userFile = join(xdgConfig, 'one-works', 'one-works.yaml');
    await writeFile(userFile, 'orchestrator:\n  maxQueuedTotal: 3\n');
    const loaded = await loadConfig({ schema, cwd, env: { XDG_CONFIG_HOME: xdgConfig } });
    expect(loaded).toMatchObject({ source: 'file', path: userFile });
    expect(loaded.config.orchestrator.maxQueuedTotal).toBe(3);

    await writeFile(userFile, 'sandbox: docker\n');
    await expect(loadConfig({ schema, cwd, env: { XDG_CONFIG_HOME: xdgConfig } })).rejects.toThrow(
      `${userFile}:1:10: sandbox: expected one of none|bwrap, got "docker"`,
    );
  });

  it('reads an explicit path relative to cwd and names it relatively in errors', async () => {
    await mkdir(join(cwd, 'conf'));
    await writeFile(join(cwd, 'conf', 'custom.yaml'), 'workspaces:\n  approved: [/srv/a]\nsandbox: 1\n');
    await expect(loadConfig({ schema, cwd, env: {}, path: 'conf/custom.yaml' })).rejects.toThrow(
      'conf/custom.yaml:3:10: sandbox: expected one of none|bwrap, got 1',
    );
  });

  it('fails with config_not_found when an explicit path does not exist', async () => {
    const error = await loadConfig({ schema, cwd, env: {}, path: 'missing.yaml' }).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'config_not_found')).toBe(true);
    expect((error as Error).message).toBe(`cannot read config file ${join(cwd, 'missing.yaml')}: ENOENT`);
  });

  it('treats an empty file as all defaults', async () => {
    await writeFile(join(cwd, 'one-works.yaml'), '# nothing yet\n');
    const loaded = await loadConfig({ schema, cwd, env: { HOME: '/h' } });
    expect(loaded.source).toBe('file');
    expect(loaded.config.adapters.droid.effort).toBe('high');
  });

  it('fills credentials from the environment when unset, and keeps explicit ones', async () => {
    const env = { HOME: '/h', XDG_CONFIG_HOME: xdgConfig, FACTORY_API_KEY: 'fk-from-env', FACTORY_TOKEN: '' };
    const implicit = await loadConfig({ schema, cwd, env });
    expect(implicit.config.adapters.droid.credentials).toEqual({ FACTORY_API_KEY: 'fk-from-env' });

    await writeFile(join(cwd, 'one-works.yaml'), 'adapters:\n  droid:\n    credentials:\n      FACTORY_API_KEY: fk-explicit\n');
    const explicit = await loadConfig({ schema, cwd, env });
    expect(explicit.config.adapters.droid.credentials).toEqual({ FACTORY_API_KEY: 'fk-explicit' });
  });

  it('interpolates values from the given env, not from process.env', async () => {
    await writeFile(join(cwd, 'one-works.yaml'), 'workspaces:\n  approved: ["${REPO}/a", "$${REPO}"]\n');
    await expect(loadConfig({ schema, cwd, env: { REPO: '/srv' } })).rejects.toThrow(
      'one-works.yaml:2:27: workspaces.approved[1]: expected an absolute path, got "${REPO}"',
    );
    await writeFile(join(cwd, 'one-works.yaml'), 'workspaces:\n  approved: ["${REPO}/a"]\n');
    const loaded = await loadConfig({ schema, cwd, env: { REPO: '/srv' } });
    expect(loaded.config.workspaces.approved).toEqual(['/srv/a']);
  });
});
