import { describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../../core/adapter.js';
import { isOneWorksError } from '../../../core/errors.js';
import { AskBoard } from '../../../core/permissions/index.js';

const TOOL_ASK: PermissionAsk = {
  requestId: 'req-1',
  kind: 'tool',
  tools: [
    { toolUseId: 'c1', name: 'Execute', kind: 'execute', label: 'execute: npm test', command: 'npm test', impact: 'medium', input: {} },
  ],
  options: ['allow-once', 'allow-session', 'deny'],
};
const QUESTION_ASK: PermissionAsk = {
  requestId: 'req-q',
  kind: 'question',
  tools: [],
  options: [],
  questions: [
    { index: 1, topic: 'Color', question: 'Which color?', options: ['Red', 'Blue'], multiSelect: false },
    { index: 2, question: 'Which sizes?', options: ['S', 'L'], multiSelect: true },
  ],
};

function thrown(run: () => unknown): { code: string; message: string; data: unknown } {
  try {
    run();
  } catch (error) {
    if (isOneWorksError(error)) return { code: error.code, message: error.message, data: error.data };
    throw error;
  }
  throw new Error('did not throw');
}

describe('AskBoard', () => {
  it('lists open asks by session with what a person needs to decide, and tells listeners', () => {
    const board = new AskBoard();
    const seen: string[] = [];
    board.onOpen((ask) => seen.push(ask.askId));
    const a = board.open({ sessionId: 's-1', runId: 'r1', ask: TOOL_ASK, reason: 'needs autonomy high', expiresAt: new Date(0) });
    const b = board.open({ sessionId: 's-2', ask: QUESTION_ASK, reason: 'questions escalate' });
    expect(board.list().map((x) => x.askId)).toEqual([a.askId, b.askId]);
    expect(board.list('s-1')).toEqual([
      expect.objectContaining({
        askId: a.askId,
        sessionId: 's-1',
        runId: 'r1',
        requestId: 'req-1',
        kind: 'tool',
        tools: [{ name: 'Execute', kind: 'execute', label: 'execute: npm test', command: 'npm test', impact: 'medium' }],
        reason: 'needs autonomy high',
        expiresAt: '1970-01-01T00:00:00.000Z',
      }),
    ]);
    expect(seen).toEqual([a.askId, b.askId]);
  });

  it('lets the first answer win and tells a later one who answered', async () => {
    const board = new AskBoard();
    const { askId, answer } = board.open({ sessionId: 's-1', ask: TOOL_ASK, reason: 'r' });
    expect(board.answer({ askId, choice: 'allow-session', channel: 'mcp' })).toEqual({
      askId,
      sessionId: 's-1',
      decision: 'allow',
      choice: 'allow-session',
      channel: 'mcp',
    });
    expect(await answer).toMatchObject({ decision: 'allow', remember: true, by: 'human', channel: 'mcp' });
    const late = thrown(() => board.answer({ askId, choice: 'deny', channel: 'cli' }));
    expect(late.code).toBe('ask_already_answered');
    expect(late.message).toContain(`ask ${askId} was already answered by an MCP client (answer_ask)`);
    expect(board.list()).toEqual([]);
  });

  it('refuses an answer once the ask settled otherwise (timeout), naming that', () => {
    const board = new AskBoard();
    const { askId, settle } = board.open({ sessionId: 's-1', ask: TOOL_ASK, reason: 'r' });
    expect(settle({ decision: 'deny', by: 'policy', reason: 'timed out' }, 'nobody (it timed out)')).toBe(true);
    expect(settle({ decision: 'allow', by: 'human' }, 'someone')).toBe(false);
    expect(thrown(() => board.answer({ askId, choice: 'allow', channel: 'cli' })).message).toContain(
      'already answered by nobody (it timed out)',
    );
  });

  it('says ask_not_found for an unknown id', () => {
    expect(thrown(() => new AskBoard().answer({ askId: 'ask-nope', choice: 'allow', channel: 'cli' }))).toMatchObject({
      code: 'ask_not_found',
      message: expect.stringContaining('one-works asks'),
    });
  });

  it('answers questions with one text each (numbers pick options) and refuses an allow without them', async () => {
    const board = new AskBoard();
    const { askId, answer } = board.open({ sessionId: 's-1', ask: QUESTION_ASK, reason: 'q' });
    expect(thrown(() => board.answer({ askId, choice: 'allow', channel: 'cli', text: ['2'] })).code).toBe('usage');
    expect(board.list()).toHaveLength(1);
    board.answer({ askId, choice: 'allow', channel: 'elicitation', text: ['2', '1, 2'] });
    expect(await answer).toEqual({
      decision: 'allow',
      by: 'human',
      channel: 'elicitation',
      reason: 'answered by a person through MCP elicitation',
      answers: [
        { index: 1, question: 'Which color?', answer: 'Blue' },
        { index: 2, question: 'Which sizes?', answer: 'S, L' },
      ],
    });
  });

  it('records a deny with its note as a person’s decision', async () => {
    const board = new AskBoard();
    const { askId, answer } = board.open({ sessionId: 's-1', ask: TOOL_ASK, reason: 'r' });
    board.answer({ askId, choice: 'deny', channel: 'cli', text: ['not now'] });
    expect(await answer).toEqual({
      decision: 'deny',
      by: 'human',
      channel: 'cli',
      reason: 'denied by a person with `one-works answer`: not now',
    });
  });
});
