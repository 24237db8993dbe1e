import { readFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForExit, waitForNoProcesses } from '../support/rig-processes.js';

// The real droid kept warm by the orchestrator between `run` and `send` (keepWarmMs), replaced
// when it died while warm, drained when the config changes, and stopped on shutdown.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Long enough that only what a test does closes the agent (not the window, not the idle exit).
const WARM = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const droids = (rig: CliRig) => rig.processes().filter((p) => p.args.includes('stream-jsonrpc'));

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);

async function serverPid(rig: CliRig): Promise<number> {
  return (JSON.parse(await readFile(join(rig.stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;
}

describe('warm agents with the real droid', () => {
  it('gives the next send to the same droid, replaces one killed while warm, and stops them on shutdown', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: WARM });

    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = droids(rig);
    expect(warm, 'the droid stays up after run exited').toBeDefined();

    const second = await rig.run(['send', id!, 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    expect(droids(rig).map((p) => p.pid)).toEqual([warm!.pid]);
    let events = await rig.readEvents(id!);
    // One start, no close, no load: the second turn ran in the warm droid.
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false]);
    expect(ofType(events, 'session.closed')).toEqual([]);

    process.kill(warm!.pid, 'SIGKILL');
    expect(await waitForExit([warm!.pid], 10_000)).toEqual([]);
    const third = await rig.run(['send', id!, 'third']);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stdout).toContain('three');
    events = await rig.readEvents(id!);
    expect(ofType(events, 'session.closed').map((e) => e.reason)).toEqual(['agent_gone']);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false, true]);
    expect(ofType(events, 'error')).toEqual([]);
    expect((await rig.readSession(id!)).runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed']);

    const replacement = droids(rig);
    expect(replacement).toHaveLength(1);
    const server = await serverPid(rig);
    process.kill(server, 'SIGTERM');
    expect(await waitForExit([server], 30_000)).toEqual([]);
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    events = await rig.readEvents(id!);
    expect(ofType(events, 'session.closed').map((e) => e.reason)).toEqual(['agent_gone', 'shutdown']);
  });

  it('drains the warm droid, recorded as config_changed, when a command comes with another config', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }, { text: 'two' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: WARM });
    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = droids(rig);
    expect(warm).toBeDefined();

    await appendFile(rig.configPath, '# edited: a new fingerprint\n');
    const second = await rig.run(['send', id!, 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain('restarting the background orchestrator');
    expect(second.stdout).toContain('two');
    expect(await waitForExit([warm!.pid], 10_000)).toEqual([]);
    const events = await rig.readEvents(id!);
    expect(ofType(events, 'session.closed').map((e) => e.reason)).toEqual(['config_changed']);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false, true]);
  });
});
