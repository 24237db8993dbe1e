import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { BUILD_TIMEOUT_MS } from '../support/package-copy.js';
import { CliRigs, type CliRig, RIG_API_KEY } from '../support/one-works-cli.js';
import { findProcesses, type RigProcess, waitForNoProcesses } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';

// A server started with an intent (by a `run` that found none) spawns that intent's droid before
// it loads the command's bundle, from the recipe the previous server of its state directory kept
// (core/session/launch-ahead.ts), and the orchestrator adopts that droid when its own launch is
// the same. Each case runs the real droid against a scripted model.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ROOT = join(import.meta.dirname, '..', '..');
// Only a build launches ahead (cli/bin.cjs loads the early bundle): the checkout's build is
// brought up to date first, as `npm run bench` does (in CI it is current).
beforeAll(async () => {
  const build = JSON.parse(readFileSync(join(ROOT, 'dist', 'build.json'), 'utf8')) as {
    builtAt: number;
    sources?: Record<string, string[]>;
  };
  const stale = Object.values(build.sources ?? {})
    .flat()
    .some((file) => !existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).mtimeMs > build.builtAt);
  if (stale) {
    const built = await execa(process.execPath, [join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, reject: false });
    expect(built.exitCode, built.stderr).toBe(0);
  }
}, BUILD_TIMEOUT_MS);

const STOP_MS = 15_000;
const isDroid = (p: RigProcess): boolean => p.args.includes(' exec --input-format stream-jsonrpc');
const droids = (rig: CliRig): RigProcess[] => findProcesses(join(rig.stateDir, 'sessions')).filter(isDroid);
const recipePath = (rig: CliRig): string => join(rig.stateDir, 'launch-ahead.json');
const serverLog = (rig: CliRig): Promise<string> => readFile(join(rig.stateDir, 'orchestrator.log'), 'utf8').catch(() => '');
const adoptedIn = (log: string): string[] =>
  [...log.matchAll(/launch ahead: session (s-[0-9a-f]+) adopted the agent launched ahead/g)].map((m) => m[1]!);

// A `run` that starts its server, then that server stopped: what a user's next command finds.
async function runAndStop(rig: CliRig, prompt: string): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const result = await rig.run(['run', '-w', rig.workspace, prompt]);
  expect(result.exitCode, result.stderr).toBe(0);
  expect((await rig.run(['server', 'stop'])).exitCode).toBe(0);
  await rig.untilNoServer();
  return result;
}

describe('launch ahead', () => {
  it('the next server started for the same intent spawns its droid from the recipe, and the session adopts it', async () => {
    const model = await rigs.model({ steps: [{ text: 'first answer' }, { text: 'second answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    await runAndStop(rig, 'hello');
    // The recipe: private, and without the API key the config writes out.
    expect(statSync(recipePath(rig)).mode & 0o777).toBe(0o600);
    const recipe = await readFile(recipePath(rig), 'utf8');
    expect(recipe).not.toContain(RIG_API_KEY);
    expect(adoptedIn(await serverLog(rig))).toEqual([]);
    const before = await rig.sessionIds();

    const second = await runAndStop(rig, 'hello');
    expect(second.stdout).toContain('second answer');
    const after = await rig.sessionIds();
    const [created] = after.filter((id) => !before.includes(id));
    // Adopted by the session the run created, which ran its turn on it; nothing else was spawned for it.
    expect(adoptedIn(await serverLog(rig))).toEqual([created]);
    expect(after).toHaveLength(2);
    expect((await rig.readSession(created!)).runs.map((r) => r.status)).toEqual(['completed']);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
    expect(await readFile(recipePath(rig), 'utf8')).not.toContain(RIG_API_KEY);
  });

  it('a recipe that is not what the orchestrator launches: the droid launched ahead is stopped and its directory removed, the run goes on, and it is not tried again', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    await runAndStop(rig, 'hello');
    // A recipe that no longer says what the orchestrator launches (as after a change of how One
    // Works launches droid): one more variable in the droid's environment.
    const recipe = JSON.parse(await readFile(recipePath(rig), 'utf8')) as { launch: { env: unknown[] } };
    recipe.launch.env.push(['ONE_WORKS_TEST_STALE_RECIPE', ['1']]);
    await writeFile(recipePath(rig), JSON.stringify(recipe), { mode: 0o600 });

    const second = await runAndStop(rig, 'hello');
    expect(second.stdout).toContain('two');
    const log = await serverLog(rig);
    expect(log).toMatch(/launch ahead: the agent launched ahead for session s-[0-9a-f]+ was not adopted \(another environment\)/);
    expect(adoptedIn(log)).toEqual([]);
    // Only the sessions of the two runs: the directory of the droid launched ahead is gone with it.
    expect(await rig.sessionIds()).toHaveLength(2);
    expect(JSON.parse(await readFile(recipePath(rig), 'utf8'))).toMatchObject({ mismatch: true });

    const third = await runAndStop(rig, 'hello');
    expect(third.stdout).toContain('three');
    const lines = (await serverLog(rig)).split('\n').filter((line) => line.startsWith('launch ahead:'));
    expect(lines).toHaveLength(1);
    expect(await rig.sessionIds()).toHaveLength(3);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
  });

  it('a server that exits before it serves (another owns the state directory) kills the droid it launched ahead and removes its directory', async () => {
    const model = await rigs.model({ steps: [{ text: 'first answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    await runAndStop(rig, 'hello');
    const { key } = JSON.parse(await readFile(recipePath(rig), 'utf8')) as { key: { intent: string } };
    const sessions = await rig.sessionIds();
    // The owner: a server started by hand.
    const owner = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    // A server started as the run starts one, with the same intent and environment: it launches
    // the droid ahead, loses the owner lock and leaves.
    const loser = rig.start(['serve', '--auto', '--intent', key.intent]);
    const { exitCode, stderr } = await loser.result;
    expect(exitCode, stderr).toBe(0);
    expect(stderr).toContain('another orchestrator owns this state directory');
    const [ahead] = [...stderr.matchAll(/launch ahead: an agent was launched ahead for session (s-[0-9a-f]+), and no launch took it/g)].map(
      (m) => m[1]!,
    );
    expect(ahead).toBeDefined();
    expect(existsSync(join(rig.stateDir, 'sessions', ahead!))).toBe(false);
    expect(await waitForNoProcesses(() => droids(rig), STOP_MS)).toEqual([]);
    expect(await rig.sessionIds()).toEqual(sessions);
    owner.kill('SIGTERM');
    expect((await owner.result).exitCode).toBe(0);
  });
});
