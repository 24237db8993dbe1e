import { existsSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { processEnv, waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';

// `orchestrator.prewarm` with the real droid: the next `run` like the last one takes the droid
// the orchestrator started ahead (same process), one left unused is closed after its window; and
// an edit of one-works.yaml while an orchestrator runs closes its warm and prewarmed droids at
// once, without waiting for a command.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const LONG = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);

// The droid processes of the rig, each with the session its HOME belongs to.
function droids(rig: CliRig): Array<{ pid: number; sessionId: string | undefined }> {
  return rig
    .processes()
    .filter((p) => p.args.includes('stream-jsonrpc'))
    .map((p) => ({ pid: p.pid, sessionId: /\/sessions\/([^/]+)\/home/.exec(processEnv(p.pid).HOME ?? '')?.[1] }));
}

// Waits for a droid started for no listed session: the prewarmed one.
async function prewarmedDroid(rig: CliRig, listed: string[]): Promise<{ pid: number; sessionId: string }> {
  let found: { pid: number; sessionId: string | undefined } | undefined;
  await until(() => {
    found = droids(rig).find((d) => d.sessionId !== undefined && !listed.includes(d.sessionId));
    return found !== undefined;
  });
  return found as { pid: number; sessionId: string };
}

async function listed(rig: CliRig): Promise<string[]> {
  const result = await rig.run(['--json', 'sessions']);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { sessionId: string }).sessionId);
}

async function serverPid(rig: CliRig): Promise<number> {
  return (JSON.parse(await readFile(join(rig.stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;
}

describe('prewarmed droids and config edits', () => {
  it('gives the next run in the workspace the prewarmed droid, and closes warm and prewarmed droids when the config is edited', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { ...LONG, prewarm: 1 } });
    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = await listed(rig);
    expect(before).toHaveLength(1);
    const prewarmed = await prewarmedDroid(rig, before);
    // Held for a session to come: no listing shows it.
    expect(await listed(rig)).toEqual(before);

    const second = await rig.run(['run', '--workspace', rig.workspace, 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    const after = await listed(rig);
    expect(after).toEqual([...before, prewarmed.sessionId]);
    // The turn ran in the droid started ahead: same process, one start, no load.
    expect(droids(rig).find((d) => d.sessionId === prewarmed.sessionId)?.pid).toBe(prewarmed.pid);
    const events = await rig.readEvents(prewarmed.sessionId);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false]);
    expect(ofType(events, 'turn.completed').map((e) => e.outcome.status)).toEqual(['completed']);
    expect((await rig.readSession(prewarmed.sessionId)).runs.map((run) => run.status)).toEqual(['completed']);

    // An edit, and no command: every droid (two warm, one prewarmed again) is closed by the orchestrator itself.
    const refilled = await prewarmedDroid(rig, after);
    const live = droids(rig).map((d) => d.pid);
    expect(live).toHaveLength(3);
    await appendFile(rig.configPath, '# edited while the orchestrator runs\n');
    expect(await waitForExit(live, 15_000)).toEqual([]);
    for (const id of after)
      expect(ofType(await rig.closedEvents(id, 1), 'session.closed').map((e) => e.reason)).toEqual(['config_changed']);
    // Its directory goes right after the droid (bounded by the test timeout).
    await until(() => !existsSync(join(rig.stateDir, 'sessions', refilled.sessionId)));

    // The next command restarts the background orchestrator with the new config; the turn completes.
    const third = await rig.run(['send', prewarmed.sessionId, 'third']);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stderr).toContain('restarting the background orchestrator');
    expect(third.stdout).toContain('three');
  });

  it('closes a prewarmed droid nobody used after its window and removes its directory', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { keepWarmMs: 3_000, idleExitMs: 600_000, prewarm: 1 } });
    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = await listed(rig);
    const prewarmed = await prewarmedDroid(rig, before);
    expect(await waitForExit([prewarmed.pid], 20_000)).toEqual([]);
    await until(() => !existsSync(join(rig.stateDir, 'sessions', prewarmed.sessionId)));
    expect(await listed(rig)).toEqual(before);
    expect(droids(rig)).toEqual([]);
  });

  it('tells a `serve` whose config was edited to be restarted, after closing its warm droid', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: LONG });
    const server = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await listed(rig);
    const warm = droids(rig);
    expect(warm.map((d) => d.sessionId)).toEqual([id]);

    await appendFile(rig.configPath, '# edited while serve runs\n');
    expect(await waitForExit([warm[0]!.pid], 15_000)).toEqual([]);
    expect(ofType(await rig.closedEvents(id!, 1), 'session.closed').map((e) => e.reason)).toEqual(['config_changed']);
    const refused = await rig.run(['send', id!, 'second']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain('runs with a different configuration');
    expect(refused.stderr).toContain('config file');

    const pid = await serverPid(rig);
    server.kill('SIGTERM');
    const stopped = await server.result;
    expect(stopped.exitCode).toBe(0);
    expect(stopped.stderr).toContain('changed: warm and prewarmed agents are closed (config_changed)');
    expect(stopped.stderr).toContain('restart `one-works serve`');
    expect(await waitForExit([pid], 10_000)).toEqual([]);
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
  });
});
