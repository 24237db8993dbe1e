import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs } from '../support/one-works-cli.js';

// Real droid 0.225.2, scripted model: two tool calls in one assistant message fold into two
// spans; a resumed session (load_session replays the history) adds no duplicate events.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

const execute = (id: string, command: string) => ({
  id,
  name: 'Execute',
  arguments: { command, riskLevel: 'low', riskLevelReason: 'writes a file' },
});

function toolEvents(events: RuntimeEvent[], toolUseId: string): RuntimeEvent[] {
  return events.filter((e) => (e.type === 'tool.call' || e.type === 'tool.result') && e.toolUseId === toolUseId);
}

describe('tool spans and replay', () => {
  it('folds two tool calls of one message into two spans, and a resumed session replays nothing twice', async () => {
    const model = await rigs.model({
      steps: [
        { text: 'Two files.', toolCalls: [execute('two_a', 'echo one > a.txt'), execute('two_b', 'echo two > b.txt')] },
        { text: 'Both written.' },
        { text: 'Second turn answer.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });

    const first = await rig.run(['run', '--workspace', rig.workspace, 'write two files']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(await readFile(join(rig.workspace, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(rig.workspace, 'b.txt'), 'utf8')).toBe('two\n');
    expect(first.stdout.match(/^▸ execute: echo (one > a|two > b)\.txt$/gm)).toHaveLength(2);
    expect(first.stdout.match(/^ {2}✓ execute: echo (one > a|two > b)\.txt$/gm)).toHaveLength(2);

    const [id] = await rig.sessionIds();
    const afterFirst = await rig.readEvents(id!);
    for (const toolUseId of ['two_a', 'two_b']) {
      const span = toolEvents(afterFirst, toolUseId);
      // One span per native tool-use id: opened once, updated, closed once by its result.
      expect(span.filter((e) => e.type === 'tool.call' && e.phase === 'open')).toHaveLength(1);
      expect(span.filter((e) => e.type === 'tool.result')).toHaveLength(1);
      expect(span.at(-1)).toMatchObject({ type: 'tool.result', isError: false });
    }
    const firstMessages = afterFirst.filter((e) => e.type === 'assistant.message');
    expect(firstMessages.map((e) => (e.type === 'assistant.message' ? e.text : ''))).toEqual(['Two files.', 'Both written.']);

    const second = await rig.run(['send', id!, 'and now?']);
    expect(second.exitCode, second.stderr).toBe(0);
    const all = await rig.readEvents(id!);
    const resumedAt = all.findIndex((e) => e.type === 'session.started' && e.resumed);
    expect(resumedAt).toBeGreaterThan(afterFirst.length - 1);
    const replayed = all.slice(afterFirst.length);
    // The history load_session returned (both tool calls, both messages) is already recorded.
    expect(
      replayed.filter((e) => (e.type === 'tool.call' || e.type === 'tool.result') && ['two_a', 'two_b'].includes(e.toolUseId)),
    ).toEqual([]);
    expect(replayed.filter((e) => e.type === 'assistant.message').map((e) => (e.type === 'assistant.message' ? e.text : ''))).toEqual([
      'Second turn answer.',
    ]);
    expect(new Set(all.map((e) => e.key)).size).toBe(all.length);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
  });
});
