import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, startOneWorks } from '../support/one-works-cli.js';
import { executeStep, until } from './orchestrator-rig.js';

// Issue 19 with the real droid (managed, already in the conformance cache): a run prints no
// install noise, its closing hint works as printed, `sessions rm` refuses a live turn, and
// `sessions` shows droid's own title of an untitled session.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('a calm, honest CLI with the real droid', () => {
  it('prints no install line for an installed CLI, and a continue hint that works as printed (with --config)', async () => {
    const model = await rigs.model({ steps: [{ text: 'first answer' }, { text: 'second answer' }, { text: 'third answer' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const env = { HOME: rig.userHome };
    // From the workspace: the config is not the one found by default there.
    const first = await startOneWorks(['--config', rig.configPath, 'run', 'hello'], { cwd: rig.workspace, env }).result;
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stderr).not.toMatch(/already installed|--version|checking |installing |resolving /);
    const hint = /^ {2}continue: (one-works .+)$/m.exec(first.stdout)?.[1];
    expect(hint).toBe(`one-works --config ${rig.configPath} send ${/session (s-[0-9a-f]+): completed/.exec(first.stdout)?.[1]} "…"`);

    // The hint, run as printed (the prompt filled in), continues the session.
    const args = hint!.split(' ').slice(1, -1);
    const second = await startOneWorks([...args, 'and again'], { cwd: rig.workspace, env }).result;
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('second answer');
    expect(second.stderr).not.toMatch(/already installed|--version/);

    const quiet = await rig.run(['run', '--no-hint', '-w', rig.workspace, 'third']);
    expect(quiet.exitCode, quiet.stderr).toBe(0);
    expect(quiet.stdout).toContain('third answer');
    expect(quiet.stdout).not.toContain('continue:');

    // --verbose shows the cache hit and the version check.
    const verbose = await rig.run(['--verbose', 'adapters', 'install']);
    expect(verbose.stderr).toContain('is already installed in');
    expect(verbose.stderr).toContain('--version');
    const plain = await rig.run(['adapters', 'install']);
    expect(plain.stderr).toBe('');
    expect(plain.stdout.trim().split('\n')).toHaveLength(1);

    // droid titled the untitled sessions itself; `sessions` shows that title.
    const rows = (await rig.run(['--json', 'sessions'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { sessionId: string; title: string | null; titleSource: string | null });
    expect(rows.length).toBe(2);
    for (const row of rows) expect(row).toMatchObject({ title: expect.stringMatching(/\S/), titleSource: 'agent' });
  });

  it('sessions rm refuses a session with a live turn, and removes it once the turn is cancelled', async () => {
    const model = await rigs.model({ steps: [executeStep('call_sleep_rm', 'sleep 60'), { text: 'slept' }] });
    // Autonomy high: the policy lets the scripted `sleep` run (at low it would be declined at once, with no terminal).
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { idleExitMs: 60_000 }, droid: { autonomy: 'high' } });
    const submitted = await rig.run(['--json', 'run', '--detach', '-w', rig.workspace, 'sleep a while']);
    expect(submitted.exitCode, submitted.stderr).toBe(0);
    const sessionId = (JSON.parse(submitted.stdout) as { sessionId: string }).sessionId;
    await until(() => model.requests.length >= 1);

    const refused = await rig.run(['sessions', 'rm', sessionId]);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain(`session ${sessionId} has a live or queued turn`);
    const dir = join(rig.stateDir, 'sessions', sessionId);
    expect(existsSync(join(dir, 'session.json'))).toBe(true);

    expect((await rig.run(['cancel', sessionId])).exitCode).toBe(0);
    const removed = await rig.run(['sessions', 'rm', sessionId]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(existsSync(dir)).toBe(false);
    expect(await rig.sessionIds()).toEqual([]);
    const stopped = await rig.run(['server', 'stop']);
    expect(stopped.stdout).toContain('stopped the orchestrator');
  });
});
