import { describe, expect, it } from 'vitest';
import { CodexProjector, codexTurnStatus } from '../../../adapters/codex/project.js';

const WS = '/ws';

describe('CodexProjector', () => {
  it('projects a command execution as one span keyed by item id, written once however often re-sent', () => {
    const projector = new CodexProjector(WS);
    const started = { type: 'commandExecution', id: 'call_1', command: "/bin/bash -lc 'echo hi'", cwd: WS, status: 'inProgress' };
    const call = projector.itemStarted(started);
    expect(call).toEqual([
      expect.objectContaining({
        type: 'tool.call',
        key: 'tool.call:call_1:running',
        toolUseId: 'call_1',
        kind: 'execute',
        label: 'execute: echo hi',
      }),
    ]);
    expect(projector.itemStarted(started)[0]?.key).toBe(call[0]?.key);
    const done = projector.itemCompleted({ ...started, status: 'completed', aggregatedOutput: 'hi\n', exitCode: 0 });
    expect(done).toEqual([
      { type: 'tool.result', key: 'tool.result:call_1', toolUseId: 'call_1', isError: false, output: 'hi\n', closedBy: 'agent' },
    ]);
    expect(projector.closeOpenSpans('gone')).toEqual([]);
  });

  it('marks a declined or failing command as an error, and closes open spans on interrupt', () => {
    const projector = new CodexProjector(WS);
    const declined = projector.itemCompleted({
      type: 'commandExecution',
      id: 'c2',
      command: 'rm x',
      status: 'declined',
      aggregatedOutput: null,
      exitCode: null,
    });
    expect(declined.map((d) => d.type)).toEqual(['tool.call', 'tool.result']);
    expect(declined[1]).toMatchObject({ isError: true, output: 'declined' });
    const failed = projector.itemCompleted({ type: 'commandExecution', id: 'c3', command: 'false', status: 'completed', exitCode: 1 });
    expect(failed[1]).toMatchObject({ isError: true });
    projector.itemStarted({ type: 'commandExecution', id: 'c4', command: 'sleep 9' });
    expect(projector.closeOpenSpans('interrupted')).toEqual([
      { type: 'tool.result', key: 'tool.result:c4', toolUseId: 'c4', isError: true, output: 'interrupted', closedBy: 'runtime' },
    ]);
  });

  it('streams agent deltas, commits messages, answers with the last message, and sums the turn usage', () => {
    const projector = new CodexProjector(WS);
    projector.beginTurn();
    expect(projector.agentDelta('m1', 'He')).toEqual([{ type: 'assistant.delta', key: 'delta:m1:1', messageId: 'm1', text: 'He' }]);
    expect(projector.agentDelta('m1', 'llo')[0]?.key).toBe('delta:m1:2');
    projector.itemCompleted({ type: 'agentMessage', id: 'm1', text: 'Hello' });
    projector.itemCompleted({ type: 'agentMessage', id: 'm2', text: 'Final' });
    expect(projector.turnText()).toBe('Final');
    expect(projector.turnUsage()).toEqual({ reported: false });
    const b = { totalTokens: 55, inputTokens: 50, cachedInputTokens: 10, outputTokens: 5, reasoningOutputTokens: 1 };
    projector.usage(b);
    projector.usage(b);
    expect(projector.turnUsage()).toEqual({ reported: true, inputTokens: 100, outputTokens: 10, cacheReadTokens: 20, thinkingTokens: 2 });
    projector.beginTurn();
    expect(projector.turnText()).toBe('');
  });

  it('maps turn statuses', () => {
    expect(codexTurnStatus('completed', undefined)).toEqual({ status: 'completed', reason: 'completed' });
    expect(codexTurnStatus('interrupted', undefined)).toEqual({ status: 'interrupted', reason: 'cancelled' });
    expect(codexTurnStatus('failed', 'stream error')).toEqual({ status: 'failed', reason: 'failed: stream error' });
  });
});
