import { describe, expect, it } from 'vitest';
import { ClaudeProjector, resultStatus, resultUsage } from '../../../adapters/claude-code/project.js';
import { claudeToolKind, describeClaudeTool } from '../../../adapters/claude-code/tools.js';
import { parseClaudeVersion } from '../../../adapters/claude-code/versions.js';
import { type ResultMessage, StdoutMessageSchema } from '../../../adapters/claude-code/wire.js';

// Lines shaped like Claude Code 2.1.333's stream-json output (see docs/claude-code-adapter.md).
const WS = '/ws';
const parse = (line: unknown) => StdoutMessageSchema.parse(line);

const toolUse = parse({
  type: 'assistant',
  uuid: 'u-1',
  parent_tool_use_id: null,
  message: {
    id: 'msg_1',
    content: [
      { type: 'text', text: 'Writing.' },
      { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo hi > a.txt', description: 'x' } },
    ],
  },
});
const toolResult = parse({
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'hi', is_error: false }] },
});

describe('ClaudeProjector', () => {
  it('maps an assistant message to a message and a tool span keyed by native ids, and the result closes it', () => {
    const projector = new ClaudeProjector(WS);
    projector.beginTurn();
    expect(projector.project(toolUse)).toEqual([
      { type: 'assistant.message', key: 'message:msg_1:0', messageId: 'msg_1:0', text: 'Writing.' },
      {
        type: 'tool.call',
        key: 'tool.call:toolu_1:input',
        toolUseId: 'toolu_1',
        name: 'Bash',
        kind: 'execute',
        label: 'execute: echo hi > a.txt',
        phase: 'input',
        input: { command: 'echo hi > a.txt', description: 'x' },
      },
    ]);
    expect(projector.project(toolResult)).toEqual([
      { type: 'tool.result', key: 'tool.result:toolu_1', toolUseId: 'toolu_1', isError: false, output: 'hi', closedBy: 'agent' },
    ]);
    // Nothing left open: a later exit closes no span.
    expect(projector.closeOpenSpans('gone')).toEqual([]);
    expect(projector.turnText()).toBe('Writing.');
  });

  it('re-projecting the same native message yields the same keys (dedup by the session layer)', () => {
    const projector = new ClaudeProjector(WS);
    const first = projector.project(toolUse).map((d) => d.key);
    const again = projector.project(toolUse).map((d) => d.key);
    expect(again).toEqual(first);
  });

  it('closes a span still open when the process goes away', () => {
    const projector = new ClaudeProjector(WS);
    projector.project(toolUse);
    expect(projector.closeOpenSpans('exited')).toEqual([
      { type: 'tool.result', key: 'tool.result:toolu_1', toolUseId: 'toolu_1', isError: true, output: 'exited', closedBy: 'runtime' },
    ]);
  });

  it('streams text deltas under the live message id', () => {
    const projector = new ClaudeProjector(WS);
    projector.project(parse({ type: 'stream_event', event: { type: 'message_start', message: { id: 'msg_9' } } }));
    const drafts = projector.project(
      parse({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'He' } } }),
    );
    expect(drafts).toMatchObject([{ type: 'assistant.delta', messageId: 'msg_9', text: 'He' }]);
  });
});

describe('result', () => {
  const result = (over: Partial<ResultMessage>): ResultMessage =>
    ({
      type: 'result',
      subtype: 'success',
      usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 3 },
      total_cost_usd: 0.0006,
      ...over,
    }) as ResultMessage;

  it('reports usage and cost; absent usage is unreported, never zeros', () => {
    expect(resultUsage(result({}))).toEqual({ reported: true, inputTokens: 100, outputTokens: 10, cacheReadTokens: 3, costUsd: 0.0006 });
    expect(resultUsage(result({ usage: undefined }))).toEqual({ reported: false });
  });

  it('an error result after an interrupt is interrupted, otherwise failed', () => {
    expect(resultStatus(result({}), false)).toEqual({ status: 'completed', reason: 'completed' });
    expect(resultStatus(result({ subtype: 'error_during_execution', is_error: true }), true)).toEqual({
      status: 'interrupted',
      reason: 'cancelled',
    });
    expect(resultStatus(result({ subtype: 'error_max_turns', is_error: true }), false)).toEqual({
      status: 'failed',
      reason: 'error_max_turns',
    });
  });
});

describe('tools and versions', () => {
  it('maps Claude tool names to One Works kinds and policy facts', () => {
    expect(
      ['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Read', 'Grep', 'Glob', 'LS', 'WebFetch', 'WebSearch', 'mcp__x__y'].map(
        claudeToolKind,
      ),
    ).toEqual(['execute', 'edit', 'edit', 'edit', 'edit', 'read', 'search', 'search', 'search', 'fetch', 'fetch', 'other']);
    expect(describeClaudeTool('Write', { file_path: 'sub/a.txt', content: 'x' }, 't1', WS)).toMatchObject({
      kind: 'edit',
      paths: ['/ws/sub/a.txt'],
    });
    expect(describeClaudeTool('Bash', { command: 'ls' }, 't2', WS)).toMatchObject({ kind: 'execute', command: 'ls' });
  });

  it('reads the version claude --version prints', () => {
    expect(parseClaudeVersion('2.1.333 (Claude Code)\n')).toBe('2.1.333');
    expect(parseClaudeVersion('Claude Code')).toBeUndefined();
  });
});
