import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { responsesToolOutputs, startScriptedResponses } from '../support/scripted-responses.js';

// Codex runs its own command sandbox (bwrap + seccomp, `commandSandbox`). Under One Works'
// `sandbox: bwrap` the two compose: Codex's sandbox nests inside One Works' (workspace-write, the
// default), or One Works' is the only one (danger-full-access). Either way a command writes into
// the workspace and cannot write outside it.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe.each(['workspace-write', 'danger-full-access'] as const)('codex under sandbox: bwrap, commandSandbox %s', (commandSandbox) => {
  it('a command writes in the workspace; the rest of the system stays unwritable; nothing is left running', async () => {
    const outside = `/var/tmp/one-works-codex-bwrap-${process.pid}-${Date.now()}`;
    const command = `echo inside > inside.txt; echo escape > ${outside}; echo "outside-rc=$?"`;
    const model = await startScriptedResponses({
      steps: [
        { toolCalls: [{ name: 'exec_command', arguments: { cmd: command }, callId: 'call_bwrap_1' }] },
        (request) => ({ text: `Tool output: ${responsesToolOutputs(request)[0]?.output ?? ''}` }),
      ],
    });
    rigs.defer(() => model.close());
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      sandbox: 'bwrap',
      codex: { baseUrl: model.baseUrl, autonomy: 'high', commandSandbox },
    });
    const result = await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'write inside and outside']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    await expect(readFile(outside, 'utf8')).rejects.toThrow(/ENOENT/);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    const output = events.flatMap((e) => (e.type === 'tool.result' ? [e.output] : [])).join('\n');
    expect(output).toMatch(/outside-rc=[1-9]/);
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed' });
    await rig.closedEvents(id!);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
