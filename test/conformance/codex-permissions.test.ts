import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { type ResponsesStep, responsesToolOutputs, type ScriptedResponses, startScriptedResponses } from '../support/scripted-responses.js';

// The real Codex 0.171.0 under One Works' permission policy: Codex is told to ask (approval
// policy `untrusted`), every `item/commandExecution/requestApproval` goes through the policy, and
// what the policy declines never runs.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function responses(steps: ResponsesStep[]): Promise<ScriptedResponses> {
  const model = await startScriptedResponses({ steps });
  rigs.defer(() => model.close());
  return model;
}

describe('codex: permissions', () => {
  it('a command the policy escalates is declined without a terminal: nothing runs, the session needs attention', async () => {
    const model = await responses([
      { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'touch escalated.txt' }, callId: 'call_esc_1' }] },
      (request) => ({ text: `Not written: ${responsesToolOutputs(request)[0]?.output ?? '(no output)'}` }),
    ]);
    // autonomy low: an execute escalates to a person, and there is none (no terminal, askTimeoutMs 0).
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl } });
    const result = await rig.run(['run', '-A', 'codex', '--workspace', rig.workspace, 'create a file']);
    await expect(stat(join(rig.workspace, 'escalated.txt'))).rejects.toThrow(/ENOENT/);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.status, result.stderr + result.stdout).toBe('needs_attention');
    expect(record.attention?.join('\n')).toMatch(/declined/);
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'permission.requested')).toMatchObject({
      tools: [{ toolUseId: 'call_esc_1', kind: 'execute', label: 'execute: touch escalated.txt' }],
    });
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'deny',
      option: 'deny',
      nativeOption: 'decline',
    });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_esc_1', isError: true });
    // Codex told the model the command was declined, and the turn still completed.
    const second = model.requests.filter((r) => r.kind === 'step')[1];
    expect(second, 'the model was asked again after the decline').toBeDefined();
    expect(record.runs[0]).toMatchObject({ status: 'completed' });
  });

  it('a command on the deny list never runs, even at autonomy high', async () => {
    const model = await responses([
      { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'rm -f keep.txt' }, callId: 'call_rm_1' }] },
      { text: 'Could not remove it.' },
    ]);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl, autonomy: 'high' } });
    await writeFile(join(rig.workspace, 'keep.txt'), 'still here');
    const result = await rig.run(['run', '-A', 'codex', '--deny', 'rm', '--workspace', rig.workspace, 'remove the file']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'keep.txt'), 'utf8')).toBe('still here');
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'deny',
      by: 'policy',
      option: 'deny',
      nativeOption: 'decline',
    });
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_rm_1', isError: true });
    expect((events.find((e) => e.type === 'tool.result') as { output: string }).output).toMatch(/^declined/);
  });
});
