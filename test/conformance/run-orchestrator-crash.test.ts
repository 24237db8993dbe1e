import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// Issue 18 item 8 on the real droid: the orchestrator `run` follows is SIGKILLed mid-turn (droid
// running a tool). `run` says what happened and what to do, in words, without internal method
// names or request ids; `sessions` without a server shows the run as unknown (owner died), not
// working; `sessions reconcile` settles it on the store, and the dead owner's droid and tool are
// gone afterwards.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('run when its orchestrator dies mid-turn', () => {
  it('explains what happened and what to do; sessions shows unknown (owner_died); reconcile settles it', { timeout: 400_000 }, async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'long job': (request) => (toolResults(request).length > 0 ? { text: 'slept' } : executeStep('call_crash_long_1', 'sleep 45')),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const running = rig.start(['run', '-w', rig.workspace, 'long job']);
    let ended = false;
    void running.result.finally(() => {
      ended = true;
    });
    await until(() => ended || rig.processes().some((p) => p.args === 'sleep 45'));
    expect(ended, 'run ended before its tool ran').toBe(false);
    const [server] = rig.servers();
    expect(server).toBeDefined();
    process.kill(server!.pid, 'SIGKILL');

    const result = await running.result;
    const sessionId = /session (s-[0-9a-f]+) ·/.exec(result.stderr)?.[1];
    expect(sessionId, result.stderr).toBeDefined();
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain(`the orchestrator (pid ${server!.pid}) stopped while it ran turn r1 of session ${sessionId}`);
    expect(result.stderr).toContain(`one-works events ${sessionId}`);
    expect(result.stderr).toContain(`one-works sessions reconcile ${sessionId} r1 --status completed|failed|interrupted`);
    expect(result.stderr).not.toMatch(/waitForRun|request c\d|peer closed/);

    const listed = await rig.run(['sessions']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${sessionId} +(?:droid +)?needs attention .*r1 unknown \\(owner_died\\)`, 'm'));
    expect(listed.stdout).not.toMatch(/working/);
    expect((await rig.readSession(sessionId!)).runs[0]?.status).toBe('running');

    const settled = await rig.run(['sessions', 'reconcile', sessionId!, 'r1', '--status', 'interrupted', '--note', 'killed on purpose']);
    expect(settled.exitCode, settled.stderr).toBe(0);
    expect((await rig.readSession(sessionId!)).runs[0]).toMatchObject({ status: 'interrupted', reason: 'reconciled' });
    const events = await rig.readEvents(sessionId!);
    expect(events.filter((e) => e.type === 'run.reconciled')).toMatchObject([
      { runId: 'r1', status: 'interrupted', previous: { status: 'unknown', reason: 'owner_died' }, note: 'killed on purpose' },
    ]);
    const left = await waitForNoProcesses(() => rig.processes().filter((p) => p.args === 'sleep 45' || /droid exec/.test(p.args)), 15_000);
    expect(left).toEqual([]);
  });
});
