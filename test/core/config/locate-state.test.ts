import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { createConfigSchema, loadConfig, locateState } from '../../../core/config/index.js';

// locateState: the state directory a `run` reads before its config is loaded (to tell its intent
// to the orchestrator early). Wherever it answers, the full load agrees; where the load would
// fail or could differ, it does not answer.

const schema = createConfigSchema({ droid: DroidConfigSchema });

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'ow-locate-'));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const write = (text: string, name = 'one-works.yaml'): Promise<void> => writeFile(join(cwd, name), text);

async function loadedStateDir(env: Record<string, string>, path?: string): Promise<string> {
  const { config } = await loadConfig({ schema, cwd, env, ...(path ? { path } : {}) });
  return config.state.directory;
}

describe('locateState', () => {
  it.each<[string, string, Record<string, string>]>([
    ['no state block', 'workspaces: { approved: [/w] }\n', { HOME: '/h' }],
    ['an absolute directory', 'state: { directory: /srv/ow-state }\n', { HOME: '/h' }],
    ['a ${VAR} directory', 'state: { directory: "${OW_STATE}/s" }\n', { HOME: '/h', OW_STATE: '/var/x' }],
    ['a ${VAR:-default} directory', 'state: { directory: "${UNSET_VAR:-/d}/s" }\n', { HOME: '/h' }],
    ['an explicit file backend', 'state: { backend: file, directory: /a }\n', { HOME: '/h' }],
    ['XDG_STATE_HOME', 'workspaces: { approved: [/w] }\n', { HOME: '/h', XDG_STATE_HOME: '/xdg' }],
    ['an anchor', 'cache: { directory: &dir /anchored }\nstate: { directory: *dir }\n', { HOME: '/h' }],
  ])('agrees with the full load: %s', async (_name, text, env) => {
    await write(text);
    const located = locateState({ cwd, env });
    expect(located).toEqual({ configPath: join(cwd, 'one-works.yaml'), stateDir: await loadedStateDir(env) });
  });

  it('without a config file: the XDG default, as the load', async () => {
    const env = { HOME: cwd, XDG_CONFIG_HOME: join(cwd, 'none') };
    expect(locateState({ cwd, env })).toEqual({ configPath: undefined, stateDir: await loadedStateDir(env) });
  });

  it('reads an explicit --config file, relative to cwd, and the user config file when cwd has none', async () => {
    await mkdir(join(cwd, 'conf'));
    await write('state: { directory: /explicit }\n', 'conf/mine.yaml');
    expect(locateState({ cwd, env: { HOME: '/h' }, path: 'conf/mine.yaml' })).toEqual({
      configPath: join(cwd, 'conf', 'mine.yaml'),
      stateDir: await loadedStateDir({ HOME: '/h' }, 'conf/mine.yaml'),
    });
    await mkdir(join(cwd, 'xdg', 'one-works'), { recursive: true });
    await write('state: { directory: /from-user-config }\n', 'xdg/one-works/one-works.yaml');
    const sub = join(cwd, 'conf');
    expect(locateState({ cwd: sub, env: { HOME: '/h', XDG_CONFIG_HOME: join(cwd, 'xdg') } })).toEqual({
      configPath: join(cwd, 'xdg', 'one-works', 'one-works.yaml'),
      stateDir: '/from-user-config',
    });
  });

  it.each<[string, string, Record<string, string>]>([
    ['a relative directory', 'state: { directory: rel/state }\n', { HOME: '/h' }],
    ['an unset variable', 'state: { directory: "${NOT_SET_ANYWHERE}/s" }\n', { HOME: '/h' }],
    ['a YAML error', 'state: { directory: [unclosed\n', { HOME: '/h' }],
    ['the postgres backend', 'state: { backend: postgres, postgres: { url: "postgres://x@127.0.0.1/db" } }\n', { HOME: '/h' }],
    ['a state that is not a mapping', 'state: 3\n', { HOME: '/h' }],
  ])('does not answer for %s', async (_name, text, env) => {
    await write(text);
    expect(locateState({ cwd, env })).toBeUndefined();
  });

  it('does not answer for an explicit file that cannot be read', () => {
    expect(locateState({ cwd, env: { HOME: '/h' }, path: 'missing.yaml' })).toBeUndefined();
  });
});
