import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { isAlive, processEnv, waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';

// The README promises that an orchestrator's warm and prewarmed agents never outlive it: kill -9
// of the orchestrator that owns them (no shutdown, no sweep by a successor; nothing else is
// started afterwards) leaves no droid behind, with the real droid.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Long enough that only the crash can end the agents (not their window, not the idle exit).
const LONG = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const droids = (rig: CliRig) => rig.processes().filter((p) => p.args.includes('stream-jsonrpc'));

async function serverPid(rig: CliRig): Promise<number> {
  return (JSON.parse(await readFile(join(rig.stateDir, 'owner.json'), 'utf8')) as { pid: number }).pid;
}

describe('warm and prewarmed droids when their orchestrator is killed with SIGKILL', () => {
  it('leaves neither the warm droid nor the prewarmed one running', async () => {
    const model = await rigs.model({ steps: [{ text: 'one' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { ...LONG, prewarm: 1 } });

    const first = await rig.run(['run', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const listing = await rig.run(['--json', 'sessions']);
    expect(listing.exitCode, listing.stderr).toBe(0);
    const id = (JSON.parse(listing.stdout.trim().split('\n')[0]!) as { sessionId: string }).sessionId;
    // The session's droid stays warm, and a second one is started ahead for the next run (its
    // HOME belongs to a session nobody has listed yet).
    await until(() => droids(rig).length === 2);
    const homes = droids(rig).map((p) => processEnv(p.pid).HOME ?? '');
    expect(homes.filter((home) => home.includes(`/sessions/${id}/`))).toHaveLength(1);
    const agents = droids(rig).map((p) => p.pid);

    const server = await serverPid(rig);
    process.kill(server, 'SIGKILL');
    expect(await waitForExit([server], 10_000)).toEqual([]);

    // Bounded wait: the agents notice their owner's death on their own.
    expect(await waitForNoProcesses(() => droids(rig), 15_000)).toEqual([]);
    expect(agents.filter((pid) => isAlive(pid))).toEqual([]);
  });
});
