import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// `sandbox: bwrap` runs the real droid under bubblewrap (.ci/run installs it): the root file
// system is read-only, the workspace and the session HOME are writable, /tmp is private.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

describe('sandbox: bwrap', () => {
  it('runs a real turn confined: writes land in the workspace, the rest of the system is read-only', async () => {
    const outside = `/var/tmp/one-works-bwrap-${process.pid}-${Date.now()}`;
    const command = `echo inside > inside.txt; echo escape > ${outside}; echo "outside-rc=$?"; echo home > "$HOME/home.txt"; echo "home-rc=$?"`;
    const model = await rigs.model({
      steps: [
        { toolCalls: [{ id: 'bwrap_call_1', name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'writes files' } }] },
        { text: 'Tried both.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, sandbox: 'bwrap', droid: RUNS_COMMANDS });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'write inside and outside']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    await expect(readFile(outside, 'utf8')).rejects.toThrow(/ENOENT/);
    const [id] = await rig.sessionIds();
    expect(await readFile(join(rig.sessionHome(id!), 'home.txt'), 'utf8')).toBe('home\n');
    const events = await rig.readEvents(id!);
    const output = events.flatMap((e) => (e.type === 'tool.result' ? [e.output] : [])).join('\n');
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/outside-rc=[1-9]/);
    expect(output).toContain('home-rc=0');
    // The orchestrator closes the idle droid (and bwrap) after the turn, without holding up run.
    await rig.closedEvents(id!);
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
  });
});
