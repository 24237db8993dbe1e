import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { HARNESS, REFERENCE_RUNNER, referenceRig } from './process-runner-support.js';

// The process runner under the policy's escalation rule and under `sandbox: bwrap`: One Works
// runs the runner's commands itself, so the sandbox and the policy apply to every one of them.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;

describe('process runner: policy escalation and sandbox', () => {
  it('at autonomy low, a command escalates; with nobody to ask it is declined, stays unrun, and the session needs attention', async () => {
    const { rig, model } = await referenceRig(rigs, [
      { toolCalls: [{ id: 'call_low', name: 'run_command', arguments: { command: 'touch escalated.txt' } }] },
      (request) => ({ text: `Result: ${toolResults(request)[0]?.content ?? '(nothing)'}` }),
    ]);
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'touch a file']);
    expect(result.exitCode, result.stderr).toBe(0);
    await expect(access(join(rig.workspace, 'escalated.txt'))).rejects.toThrow();
    const [id] = await rig.sessionIds();
    const events = await rig.closedEvents(id!);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny' });
    expect(toolResults(model.requests.filter((r) => r.kind === 'step')[1]!)[0]?.content).toContain(
      'One Works denied this execute tool call',
    );
    const record = await rig.readSession(id!);
    expect(record.status).toBe('needs_attention');
  });

  it('sandbox: bwrap confines the runner and its commands: the workspace and HOME are writable, the rest read-only', async () => {
    const outside = `/var/tmp/one-works-runner-bwrap-${process.pid}-${Date.now()}`;
    const command = `echo inside > inside.txt; echo escape > ${outside}; echo "outside-rc=$?"; echo home > "$HOME/home.txt"; echo "home-rc=$?"`;
    const model = await rigs.model({
      steps: [{ toolCalls: [{ id: 'call_bwrap', name: 'run_command', arguments: { command } }] }, { text: 'Tried both.' }],
      strict: true,
    });
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      sandbox: 'bwrap',
      process: {
        harnesses: {
          [HARNESS]: {
            command: process.execPath,
            args: [REFERENCE_RUNNER],
            model: 'scripted',
            provider: { baseUrl: model.baseUrl, apiKey: 'sk-bwrap-test' },
            autonomy: 'high',
          },
        },
      },
    });
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'write inside and outside']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    await expect(readFile(outside, 'utf8')).rejects.toThrow(/ENOENT/);
    const [id] = await rig.sessionIds();
    expect(await readFile(join(rig.sessionHome(id!), 'home.txt'), 'utf8')).toBe('home\n');
    const output = (await rig.closedEvents(id!)).flatMap((e) => (e.type === 'tool.result' ? [e.output] : [])).join('\n');
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/outside-rc=[1-9]/);
    expect(output).toContain('home-rc=0');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
