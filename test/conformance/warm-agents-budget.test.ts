import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { processEnv, waitForNoProcesses } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';

// The warm-agent limits and prewarm eligibility the README promises, with the real droid: the
// least recently used warm droid is closed (recorded `evicted`) when maxWarmAgents is reached,
// a droid beyond maxWarmMemoryMb is closed (recorded `memory_budget`), and a run whose
// workspace or settings differ from the prewarmed agent's starts its own droid.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Long enough that only the limits under test close an agent (not the window, not the idle exit).
const LONG = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const closedReasons = (events: RuntimeEvent[]) =>
  events.filter((e): e is Extract<RuntimeEvent, { type: 'session.closed' }> => e.type === 'session.closed').map((e) => e.reason);

// The droid processes of the rig, each with the session its HOME belongs to.
function droids(rig: CliRig): Array<{ pid: number; sessionId: string | undefined }> {
  return rig
    .processes()
    .filter((p) => p.args.includes('stream-jsonrpc'))
    .map((p) => ({ pid: p.pid, sessionId: /\/sessions\/([^/]+)\/home/.exec(processEnv(p.pid).HOME ?? '')?.[1] }));
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

async function workspaces(rig: CliRig, ...names: string[]): Promise<string[]> {
  const dirs = names.map((name) => join(rig.workspace, name));
  await Promise.all(dirs.map((dir) => mkdir(dir)));
  return dirs;
}

async function runIn(rig: CliRig, workspace: string, prompt: string, ...flags: string[]): Promise<string> {
  const before = await listed(rig);
  const result = await rig.run(['run', '--workspace', workspace, ...flags, prompt]);
  expect(result.exitCode, result.stderr).toBe(0);
  const added = (await listed(rig)).filter((id) => !before.includes(id));
  expect(added).toHaveLength(1);
  return added[0]!;
}

describe('warm-agent limits and prewarm eligibility with the real droid', () => {
  it('closes the least recently used warm droid when maxWarmAgents is reached, recorded as evicted', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { ...LONG, maxWarmAgents: 1 } });
    const [a, b] = await workspaces(rig, 'a', 'b');
    const first = await runIn(rig, a!, 'first');
    const firstDroid = droids(rig).find((d) => d.sessionId === first);
    expect(firstDroid, 'the first droid stays warm').toBeDefined();

    const second = await runIn(rig, b!, 'second');
    await until(async () => closedReasons(await rig.readEvents(first)).length > 0);
    expect(closedReasons(await rig.readEvents(first))).toEqual(['evicted']);
    expect(await waitForNoProcesses(() => rig.processes().filter((p) => p.pid === firstDroid!.pid), 15_000)).toEqual([]);
    // The second session's droid is the one kept warm.
    expect(closedReasons(await rig.readEvents(second))).toEqual([]);
    expect(droids(rig).map((d) => d.sessionId)).toEqual([second]);
  });

  it('closes a warm droid that does not fit maxWarmMemoryMb, recorded as memory_budget', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }] });
    // No droid fits in 1 MB of resident memory.
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { ...LONG, maxWarmMemoryMb: 1 } });
    const id = await runIn(rig, rig.workspace, 'first');
    await until(async () => closedReasons(await rig.readEvents(id)).length > 0);
    expect(closedReasons(await rig.readEvents(id))).toEqual(['memory_budget']);
    expect(await waitForNoProcesses(() => rig.processes().filter((p) => p.args.includes('stream-jsonrpc')), 15_000)).toEqual([]);
  });

  it('does not give the prewarmed droid to a run in another workspace or with other settings', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { ...LONG, prewarm: 1 } });
    const [a, b] = await workspaces(rig, 'a', 'b');
    await runIn(rig, a!, 'first');
    // A droid started ahead for the last run's workspace and settings: its HOME belongs to a
    // session nobody has listed (and not to one prewarmed before, which may still be closing).
    const nextPrewarmed = async (seen: string[] = []) => {
      let found: { pid: number; sessionId: string | undefined } | undefined;
      await until(async () => {
        const known = await listed(rig);
        found = droids(rig).find((d) => d.sessionId !== undefined && !known.includes(d.sessionId) && !seen.includes(d.sessionId));
        return found !== undefined;
      });
      return found as { pid: number; sessionId: string };
    };

    // Same workspace, other settings (autonomy): not the droid prewarmed for the first run's.
    const forFirst = await nextPrewarmed();
    const otherSettings = await runIn(rig, a!, 'second', '--autonomy', 'medium');
    // Other workspace: not the droid prewarmed for the second run's.
    const forSecond = await nextPrewarmed([forFirst.sessionId]);
    const elsewhere = await runIn(rig, b!, 'third');
    for (const [id, prewarmed] of [
      [otherSettings, forFirst],
      [elsewhere, forSecond],
    ] as const) {
      expect(id).not.toBe(prewarmed.sessionId);
      // The run started a droid of its own for a fresh session.
      expect((await rig.readEvents(id)).filter((e) => e.type === 'session.started').map((e) => e.resumed)).toEqual([false]);
      expect(droids(rig).find((d) => d.sessionId === id)?.pid).not.toBe(prewarmed.pid);
    }
    // The prewarmed sessions never ran a turn: no listing shows them.
    const known = await listed(rig);
    expect(known).not.toContain(forFirst.sessionId);
    expect(known).not.toContain(forSecond.sessionId);
  });
});
