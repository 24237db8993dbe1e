import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { toolResults } from '../support/scripted-model.js';

// `one-works run` where the scripted model calls droid's Execute tool (risk low; droid asks, and
// One Works' policy allows it at autonomy high) and then answers with text.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const COMMAND = 'echo hi > out.txt && cat out.txt';
const CALL_ID = 'call_run_tool_exec_1';

describe('one-works run: a tool call', () => {
  it('runs Execute in the workspace, records one tool span and its result, and shows both', async () => {
    const model = await rigs.model({
      steps: [
        {
          text: 'Let me write the file.',
          toolCalls: [
            { id: CALL_ID, name: 'Execute', arguments: { command: COMMAND, riskLevel: 'low', riskLevelReason: 'writes one file' } },
          ],
        },
        (request) => ({ text: `The tool said: ${toolResults(request)[0]?.content.split('\n')[0] ?? '(nothing)'}` }),
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'write a file']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'out.txt'), 'utf8')).toBe('hi\n');

    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    const calls = events.filter((e) => e.type === 'tool.call');
    const results = events.filter((e) => e.type === 'tool.result');
    // One span: every tool.call and the tool.result carry the scripted tool-use id.
    expect(new Set([...calls, ...results].map((e) => e.toolUseId))).toEqual(new Set([CALL_ID]));
    expect(calls.map((e) => e.key)).toEqual([
      `tool:${CALL_ID}:open`,
      `tool:${CALL_ID}:input`,
      `tool:${CALL_ID}:queued`,
      `tool:${CALL_ID}:running`,
    ]);
    expect(calls.map((e) => e.phase)).toEqual(['open', 'input', 'queued', 'running']);
    expect(calls.find((e) => e.phase === 'input')).toMatchObject({
      name: 'Execute',
      kind: 'execute',
      label: `execute: ${COMMAND}`,
      input: { command: COMMAND },
    });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ isError: false, closedBy: 'agent' });
    expect(results[0]?.output).toContain('hi');
    expect(events.findIndex((e) => e.type === 'tool.result')).toBeGreaterThan(
      events.findIndex((e) => e.type === 'tool.call' && e.phase === 'running'),
    );

    // The model saw the tool's output under the same id, and the turn ended with its answer.
    const conversation = model.requests.filter((r) => r.kind === 'step');
    expect(conversation).toHaveLength(2);
    expect(toolResults(conversation[1]!).map((r) => r.toolCallId)).toEqual([CALL_ID]);
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed', text: 'The tool said: hi' });

    const lines = result.stdout.split('\n');
    expect(lines).toContain(`▸ execute: ${COMMAND}`);
    expect(lines).toContain(`  ✓ execute: ${COMMAND}`);
    expect(lines.indexOf(`▸ execute: ${COMMAND}`)).toBeLessThan(lines.indexOf(`  ✓ execute: ${COMMAND}`));
    expect(lines).toContain('The tool said: hi');
  });

  it('shows a failing command with ✗ and records the result as an error', async () => {
    const failing = 'ls does-not-exist-here';
    const model = await rigs.model({
      steps: [
        {
          toolCalls: [
            {
              id: 'call_run_tool_fail_1',
              name: 'Execute',
              arguments: { command: failing, riskLevel: 'low', riskLevelReason: 'lists a path' },
            },
          ],
        },
        { text: 'That path is missing.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });

    const result = await rig.run(['run', '--workspace', rig.workspace, 'list something']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const results = (await rig.readEvents(id!)).filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'call_run_tool_fail_1', isError: true });
    expect(results[0]?.output).toContain('does-not-exist-here');
    const cross = result.stdout.split('\n').find((line) => line.startsWith(`  ✗ execute: ${failing}`));
    expect(cross, result.stdout).toBeDefined();
  });
});
