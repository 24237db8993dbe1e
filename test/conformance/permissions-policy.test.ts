import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults, type Step } from '../support/scripted-model.js';

// The real droid at autonomy low asks permission for a medium-risk Execute; One Works' policy
// decides it. Without a terminal (the rigs run the CLI with no stdin), nobody can be asked.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2 runs each Execute under a bash supervisor that polls for droid every 2 s.
const TOOL_LINGER_MS = 10_000;

const COMMAND = 'echo hi > f.txt';

const askingExecute = (id: string): Step => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command: COMMAND, riskLevel: 'medium', riskLevelReason: 'writes a file' } }],
});
const echoToolResult: Step = (request) => ({ text: `Tool said: ${toolResults(request)[0]?.content.trim() ?? '(nothing)'}` });

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

// The permission events of one request, in log order.
function permissionEvents(events: RuntimeEvent[]) {
  const requested = events.filter((e) => e.type === 'permission.requested');
  const decided = events.filter((e) => e.type === 'permission.decided');
  return { requested, decided, order: events.filter((e) => e.type.startsWith('permission.')).map((e) => e.type) };
}

async function onlySession(rig: CliRig): Promise<string> {
  const ids = await rig.sessionIds();
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

describe('permission policy with the real droid, no terminal', () => {
  it('declines an escalated Execute as policy: the tool fails and writes nothing', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_declined'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'make a file']);
    expect(result.exitCode, result.stderr).toBe(0);
    const id = await onlySession(rig);
    const events = await rig.readEvents(id);

    const { requested, decided, order } = permissionEvents(events);
    expect(order).toEqual(['permission.requested', 'permission.decided']);
    expect(requested[0]).toMatchObject({
      tools: [{ toolUseId: 'call_declined', name: 'Execute', kind: 'execute', label: `execute: ${COMMAND}` }],
    });
    expect(decided[0]).toMatchObject({ requestId: requested[0]!.requestId, decision: 'deny', by: 'policy', option: 'deny' });
    expect(decided[0]?.reason).toContain('no person available');
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ toolUseId: 'call_declined', isError: true });
    expect(await exists(join(rig.workspace, 'f.txt'))).toBe(false);
    // droid ends the turn after a cancel without asking the model again.
    expect(model.pending()).toBe(1);
    expect(result.stdout).toContain('permission denied by policy');
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('leaves the session needing attention, saying what was declined', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_attention'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    expect((await rig.run(['run', '--workspace', rig.workspace, 'make a file'])).exitCode).toBe(0);
    const record = await rig.readSession(await onlySession(rig));
    expect(record.status).toBe('needs_attention');
    expect(record.attention?.join('\n')).toContain(`permission for execute: ${COMMAND} was declined`);
  });

  it('auto-allows with run --allow, keeps the flag in the record and applies it again in send', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_run'), echoToolResult, askingExecute('call_send'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });

    // `echo hi > f.txt` matches the allow prefix `echo hi`; its redirect stays inside the workspace.
    const first = await rig.run(['run', '--workspace', rig.workspace, '--allow', 'echo hi', '--deny', 'git push', 'make a file']);
    expect(first.exitCode, first.stderr).toBe(0);
    const id = await onlySession(rig);
    expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\n');
    const record = await rig.readSession(id);
    expect(record.policy).toEqual({ allow: ['echo hi'], deny: ['git push'], denyPaths: [], writeBoundary: [] });
    expect(record.status).toBe('idle');

    const second = await rig.run(['send', id, 'again']);
    expect(second.exitCode, second.stderr).toBe(0);
    const { requested, decided } = permissionEvents(await rig.readEvents(id));
    expect(requested.map((e) => e.tools[0]?.toolUseId)).toEqual(['call_run', 'call_send']);
    for (const event of decided) {
      expect(event).toMatchObject({ decision: 'allow', by: 'policy', option: 'allow-once' });
      expect(event.reason).toContain('is on the allowlist');
    }
    expect(model.pending()).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('refuses an --allow entry that chains commands, before starting anything', async () => {
    const model = await rigs.model({ steps: [] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const result = await rig.run(['run', '--workspace', rig.workspace, '--allow', 'echo hi && rm -rf /', 'make a file']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('--allow "echo hi && rm -rf /": allow entries match one command at a time');
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests).toEqual([]);
  });
});
