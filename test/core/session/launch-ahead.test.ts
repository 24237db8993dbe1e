import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  adoptLaunchedAhead,
  claimLaunchedAhead,
  dropUnclaimedAhead,
  LAUNCH_AHEAD_FILE,
  LAUNCH_AHEAD_WINDOW_MS,
  launchAhead,
  noteLaunch,
  writeLaunchRecipe,
} from '../../../core/session/launch-ahead.js';

// The recipe a server keeps of its start intent's launch, and the launch ahead the next server
// makes of it (core/session/launch-ahead.ts). The child here is /bin/sleep: what matters is what
// is spawned, with what, and what is written down.

const FROM_TEXT = 'sk-from-the-config-text-0123';
const FROM_ENV = 'sk-from-the-environment-4567';
const CONFIG_TEXT = `adapters: { droid: { customModels: [{ apiKey: ${FROM_TEXT} }] } }\n`;
const BUILD = 'build-1';

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'ow-launch-ahead-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', MY_KEY: FROM_ENV, LANG: 'C.UTF-8' };
const key = { configPath: '/etc/one-works.yaml', configText: CONFIG_TEXT, intent: '{"workspace":"/w"}' };

// A launch of `sessionId` as launchInSandbox notes it: secrets in the environment and in a seed file.
function launchOf(sessionId: string, secrets = [FROM_TEXT, FROM_ENV]) {
  const home = join(stateDir, 'sessions', sessionId, 'home');
  return {
    command: '/bin/sleep',
    args: ['30'],
    cwd: tmpdir(),
    env: { PATH: env.PATH, LANG: env.LANG, HOME: home, KEY_0: FROM_TEXT, KEY_1: FROM_ENV },
    seed: [{ path: '.factory/settings.json', content: `{"apiKey":"${FROM_ENV}","home":"${home}"}` }],
    secrets,
  };
}

describe('the launch recipe', () => {
  it('holds no secret and no value of the environment: places in the config text and names of variables instead', () => {
    // A server's bundle keeps its build's hash for the recipe (none launched: there is no recipe yet).
    launchAhead(stateDir, key, BUILD, env);
    expect(claimLaunchedAhead()).toBeUndefined();
    noteLaunch('s-00000000a1', launchOf('s-00000000a1'));
    expect(writeLaunchRecipe(stateDir, 's-00000000a1', { ...key, env })).toBe(true);
    const text = readFileSync(join(stateDir, LAUNCH_AHEAD_FILE), 'utf8');
    for (const kept of [FROM_TEXT, FROM_ENV, 's-00000000a1', env.PATH, env.LANG]) expect(text).not.toContain(kept);
    const recipe = JSON.parse(text) as { launch: { secrets: unknown[] } };
    expect(recipe.launch.secrets).toEqual([{ text: [CONFIG_TEXT.indexOf(FROM_TEXT), FROM_TEXT.length] }, { env: 'MY_KEY' }]);
  });

  it('is not written when a secret of the launch is neither in the config text nor in the environment', () => {
    launchAhead(stateDir, key, BUILD, env);
    noteLaunch('s-00000000a2', launchOf('s-00000000a2', [FROM_TEXT, 'sk-from-nowhere-89ab']));
    expect(writeLaunchRecipe(stateDir, 's-00000000a2', { ...key, env })).toBe(false);
    expect(existsSync(join(stateDir, LAUNCH_AHEAD_FILE))).toBe(false);
  });
});

describe('the launch ahead', () => {
  // A recipe for `key`, as a previous server of the state directory kept it.
  function keptRecipe(): void {
    launchAhead(stateDir, key, BUILD, env);
    noteLaunch('s-00000000b1', launchOf('s-00000000b1'));
    expect(writeLaunchRecipe(stateDir, 's-00000000b1', { ...key, env })).toBe(true);
  }

  it('spawns the launch with a new session id, its secrets read again, and the launch that is the same adopts it', () => {
    keptRecipe();
    launchAhead(stateDir, key, BUILD, env);
    const id = claimLaunchedAhead();
    expect(id).toMatch(/^s-[0-9a-f]{10}$/);
    expect(id).not.toBe('s-00000000b1');
    // Its HOME holds the seed file, with the secret and the new session's HOME.
    const home = join(stateDir, 'sessions', id!, 'home');
    expect(JSON.parse(readFileSync(join(home, '.factory', 'settings.json'), 'utf8'))).toEqual({ apiKey: FROM_ENV, home });
    const launch = launchOf(id!);
    const adopted = adoptLaunchedAhead(id!, launch);
    expect(adopted && 'child' in adopted).toBe(true);
    const child = (adopted as { child: import('node:child_process').ChildProcess }).child;
    expect(child.spawnargs).toEqual(['/bin/sleep', '30']);
    expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0').filter(Boolean).sort()).toEqual(
      Object.entries(launch.env)
        .map(([name, value]) => `${name}=${value}`)
        .sort(),
    );
    child.kill('SIGKILL');
  });

  it('spawns nothing for another build, config text, intent or environment', () => {
    keptRecipe();
    for (const [facts, build, environment] of [
      [key, 'build-2', env],
      [{ ...key, configText: `${CONFIG_TEXT}# edited\n` }, BUILD, env],
      [{ ...key, intent: '{"workspace":"/elsewhere"}' }, BUILD, env],
      [key, BUILD, { ...env, LANG: 'de_DE.UTF-8' }],
    ] as const) {
      launchAhead(stateDir, facts, build, environment);
      expect(claimLaunchedAhead()).toBeUndefined();
    }
  });

  it('a launch that differs: the child is killed, its session directory removed, and the recipe not tried again', async () => {
    keptRecipe();
    launchAhead(stateDir, key, BUILD, env);
    const id = claimLaunchedAhead()!;
    const other = { ...launchOf(id), args: ['31'] };
    const refused = adoptLaunchedAhead(id, other);
    expect(refused).toMatchObject({ mismatch: 'other arguments' });
    await (refused as { gone: Promise<void> }).gone;
    expect(existsSync(join(stateDir, 'sessions', id))).toBe(false);
    expect(JSON.parse(readFileSync(join(stateDir, LAUNCH_AHEAD_FILE), 'utf8'))).toMatchObject({ mismatch: true });
    launchAhead(stateDir, key, BUILD, env);
    expect(claimLaunchedAhead()).toBeUndefined();
    // The server that launched is not the one to write that key's recipe again.
    noteLaunch('s-00000000b2', launchOf('s-00000000b2'));
    expect(writeLaunchRecipe(stateDir, 's-00000000b2', { ...key, env })).toBe(false);
  });

  // The pids of the processes whose HOME is `home` (the child launched ahead for a session), or below it.
  function childrenWithHome(home: string, below = false): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const vars = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
        if (vars.some((v) => v === `HOME=${home}` || (below && v.startsWith(`HOME=${home}/`)))) pids.push(Number(entry));
      } catch {
        // Gone, or not ours to read.
      }
    }
    return pids;
  }

  const gone = (pid: number): boolean => !existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

  it('a child no launch adopts within LAUNCH_AHEAD_WINDOW_MS of its spawn is killed and its session directory removed', async () => {
    keptRecipe();
    // The window's timer on a fake clock (the child and its kill are real).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let id: string;
    let pid: number | undefined;
    try {
      launchAhead(stateDir, key, BUILD, env);
      // Claimed by the orchestrator's first intent, whose launch never comes (it failed before its spawn).
      id = claimLaunchedAhead()!;
      [pid] = childrenWithHome(join(stateDir, 'sessions', id, 'home'));
      expect(pid).toBeTypeOf('number');
      vi.advanceTimersByTime(LAUNCH_AHEAD_WINDOW_MS - 1);
      expect(gone(pid!)).toBe(false);
      vi.advanceTimersByTime(1);
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(gone(pid!)).toBe(true));
    expect(existsSync(join(stateDir, 'sessions', id))).toBe(false);
    // Too late to adopt: the orchestrator spawns its own.
    expect(adoptLaunchedAhead(id, launchOf(id))).toBeUndefined();
  });

  it('a child whose server started no agent for its intent is killed at once, its session directory removed', async () => {
    keptRecipe();
    launchAhead(stateDir, key, BUILD, env);
    const home = (): string[] => readdirSync(join(stateDir, 'sessions'));
    const [id] = home();
    const [pid] = childrenWithHome(join(stateDir, 'sessions', id!, 'home'));
    expect(pid).toBeTypeOf('number');
    dropUnclaimedAhead();
    await vi.waitFor(() => expect(gone(pid!)).toBe(true));
    expect(home()).toEqual([]);
    expect(claimLaunchedAhead()).toBeUndefined();
  });

  it('spawns nothing when the recipe’s seed files cannot be written in the session’s HOME (a path out of it)', () => {
    keptRecipe();
    const file = join(stateDir, LAUNCH_AHEAD_FILE);
    const recipe = JSON.parse(readFileSync(file, 'utf8')) as { launch: { seed: Array<{ path: unknown }> } };
    recipe.launch.seed[0]!.path = ['../../outside.json'];
    writeFileSync(file, JSON.stringify(recipe));
    launchAhead(stateDir, key, BUILD, env);
    expect(claimLaunchedAhead()).toBeUndefined();
    // Nothing written or left: no session directory, no file beside them, no child.
    const sessions = join(stateDir, 'sessions');
    expect(existsSync(sessions) ? readdirSync(sessions) : []).toEqual([]);
    expect(childrenWithHome(stateDir, true)).toEqual([]);
  });
});
