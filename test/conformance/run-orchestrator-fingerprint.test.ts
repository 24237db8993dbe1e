import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForExit } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { executeStep, until } from './orchestrator-rig.js';

// A run uses the orchestrator only when it runs with the run's config and environment (only a
// hash of them is compared): otherwise its turns would see stale variables.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const ownerPid = async (stateDir: string): Promise<number> =>
  (JSON.parse(await readFile(join(stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;

describe('orchestrator environment fingerprint', () => {
  it('replaces an idle auto-started orchestrator that runs with another environment; the new turn sees the new one', async () => {
    const model = await rigs.model({
      steps: [
        executeStep('call_fp_1', 'echo "lang=$LANG"'),
        (request) => ({ text: `first ${toolResults(request)[0]?.content.trim() ?? ''}` }),
        executeStep('call_fp_2', 'echo "lang=$LANG"'),
        (request) => ({ text: `second ${toolResults(request)[0]?.content.trim() ?? ''}` }),
      ],
    });
    // Long idle exit: the first server is still up when the second run comes.
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { idleExitMs: 120_000 }, droid: RUNS_COMMANDS });
    const first = await rig.run(['run', '-w', rig.workspace, 'print it'], { env: { LANG: 'C' } });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('first lang=C');
    const before = await ownerPid(rig.stateDir);

    const second = await rig.run(['run', '-w', rig.workspace, 'print it again'], { env: { LANG: 'C.UTF-8' } });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain(
      `restarting the background orchestrator (pid ${before}): it ran with a different environment variable LANG`,
    );
    expect(second.stdout).toContain('second lang=C.UTF-8');
    expect(await waitForExit([before], 0)).toEqual([]);
    const after = await ownerPid(rig.stateDir);
    expect(after).not.toBe(before);
    expect(rig.servers().map((p) => p.pid)).toEqual([after]);
  });

  // droid's Execute tool sets TERM=dumb for the commands it runs, so they show COLORTERM and NO_COLOR.
  it('shares one orchestrator between terminals with different TERM; each turn agent gets its own client presentation variables', async () => {
    const command = 'echo "color=${COLORTERM:-none} nocolor=${NO_COLOR:-none}"';
    const model = await rigs.model({
      steps: [
        executeStep('call_term_1', command),
        (request) => ({ text: `first ${toolResults(request)[0]?.content.trim() ?? ''}` }),
        executeStep('call_term_2', command),
        (request) => ({ text: `second ${toolResults(request)[0]?.content.trim() ?? ''}` }),
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { idleExitMs: 120_000 }, droid: RUNS_COMMANDS });
    const first = await rig.run(['run', '-w', rig.workspace, 'print it'], { env: { TERM: 'screen-256color', COLORTERM: 'truecolor' } });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('first color=truecolor nocolor=none');
    const before = await ownerPid(rig.stateDir);

    const second = await rig.run(['run', '-w', rig.workspace, 'print it again'], { env: { TERM: 'xterm', NO_COLOR: '1' } });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).not.toContain('restarting');
    expect(second.stdout).toContain('second color=none nocolor=1');
    expect(await ownerPid(rig.stateDir)).toBe(before);
    expect(rig.servers().map((p) => p.pid)).toEqual([before]);
  });

  it('refuses, with orchestrator_mismatch, to use a `one-works serve` started with another environment', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const server = rig.start(['serve'], { env: { LANG: 'C' } });
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    const refused = await rig.run(['run', '-w', rig.workspace, 'hello'], { env: { LANG: 'C.UTF-8', FACTORY_API_KEY: 'fk-not-sent-1234' } });
    expect(refused.exitCode).toBe(6);
    expect(refused.stderr).toMatch(
      /runs with a different configuration or environment than this command \(it differs in: environment variable LANG; config key adapters\.droid\.credentials\.FACTORY_API_KEY\), and it was started with `one-works serve`/,
    );
    expect(refused.stderr).toContain(`kill -TERM ${server.pid}`);
    expect(refused.stderr).not.toContain('fk-not-sent-1234');
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests).toEqual([]);
    // The same environment is served.
    expect((await rig.run(['--json', 'run', '--detach', '-w', rig.workspace, 'hello'], { env: { LANG: 'C' } })).exitCode).toBe(0);
    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
  });
});
