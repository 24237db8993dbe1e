import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventDraftSchema, type EventDraft } from '../../../core/events/index.js';
import { DROID_NOTIFICATION_SCHEMAS, type DroidNotificationType } from '../../../adapters/droid/notifications.js';
import { askedDraft, buildPermissionAsk, buildQuestionAsk, createDroidProjector, droidEventKeys } from '../../../adapters/droid/project.js';
import { notificationParams } from '../../support/droid-notification-samples.js';

const WS = '/work/space';
const projector = () => createDroidProjector({ workspace: WS, epoch: 'e1' });
const keys = (drafts: EventDraft[]) => drafts.map((d) => d.key);
const n = (type: DroidNotificationType, fields: Record<string, unknown>) => ({ sessionId: 's1', notification: { type, ...fields } });
const toolCall = (id: string, input: unknown = {}) => n('tool_call', { toolUse: { type: 'tool_use', id, name: 'Execute', input } });
const toolResult = (id: string, content = 'ok') => n('tool_result', { toolUseId: id, messageId: 'r1', content, isError: false });
const delta = (messageId: string, textDelta: string, blockIndex = 0) => n('assistant_text_delta', { messageId, blockIndex, textDelta });
const message = (id: string, role: string, content: unknown[], extra: Record<string, unknown> = {}) => ({ id, role, content, ...extra });
const created = (msg: Record<string, unknown>) => n('create_message', { message: msg });

/** Documented as dropped: the committed create_message carries the text; heartbeats only signal liveness. */
const DROPPED = new Set<DroidNotificationType>(['assistant_text_complete', 'thinking_text_complete', 'tool_execution_heartbeat']);

describe('droid projector: coverage of the notification union', () => {
  it.each(Object.keys(DROID_NOTIFICATION_SCHEMAS) as DroidNotificationType[])(
    '%s yields valid events or is documented as dropped',
    (type) => {
      const drafts = projector().project(notificationParams(type));
      for (const draft of drafts) expect(EventDraftSchema.safeParse(draft).success).toBe(true);
      if (DROPPED.has(type)) expect(drafts).toEqual([]);
      else expect(drafts.length).toBeGreaterThan(0);
    },
  );

  it('keeps an unknown type as native, a malformed one as log + native, and never throws', () => {
    const p = projector();
    expect(p.project(n('future_thing' as DroidNotificationType, { a: 1 }))).toMatchObject([
      { type: 'native', nativeType: 'future_thing', payload: { type: 'future_thing', a: 1 } },
    ]);
    expect(p.project(n('tool_result', { content: 'no id' }))).toMatchObject([
      { type: 'log', level: 'warn' },
      { type: 'native', nativeType: 'tool_result' },
    ]);
    expect(p.project({ nope: true })).toMatchObject([{ type: 'log' }, { type: 'native', nativeType: 'invalid_notification' }]);
    fc.assert(fc.property(fc.jsonValue(), (value) => Array.isArray(p.project(value))));
  });
});

describe('droid projector: tool spans', () => {
  it('opens a span on the first tool_call and records the full input once', () => {
    const p = projector();
    expect(p.project(toolCall('t1'))).toMatchObject([
      { type: 'tool.call', key: 'tool:t1:open', phase: 'open', label: 'execute', kind: 'execute' },
    ]);
    const input = { command: 'npm test' };
    expect(p.project(toolCall('t1', input))).toEqual([
      {
        type: 'tool.call',
        key: 'tool:t1:input',
        toolUseId: 't1',
        name: 'Execute',
        kind: 'execute',
        label: 'execute: npm test',
        phase: 'input',
        input,
      },
    ]);
    expect(p.project(toolCall('t1', input))).toEqual([]);
  });

  it('moves through queued and running once each, labelled from the recorded input', () => {
    const p = projector();
    p.project(toolCall('t1', { command: 'ls' }));
    const phase = (value: string) => p.project(n('tool_execution_phase_changed', { toolUseId: 't1', toolName: 'Execute', phase: value }));
    expect(phase('queued')).toMatchObject([{ key: 'tool:t1:queued', phase: 'queued', label: 'execute: ls' }]);
    expect(phase('queued')).toEqual([]);
    expect(phase('executing')).toMatchObject([{ key: 'tool:t1:running', phase: 'running' }]);
    expect(phase('settled_after_execution')).toMatchObject([{ type: 'native', nativeType: 'tool_execution_phase_changed' }]);
  });

  it('opens the span first when a phase arrives before any tool_call', () => {
    expect(keys(projector().project(n('tool_execution_phase_changed', { toolUseId: 't9', toolName: 'Read', phase: 'queued' })))).toEqual([
      'tool:t9:open',
      'tool:t9:queued',
    ]);
  });

  it('closes a span with the first tool_result only (droid repeats it on interrupt)', () => {
    const p = projector();
    p.project(toolCall('t1', { command: 'sleep 20' }));
    expect(p.project(toolResult('t1', 'Error: Tool execution cancelled by user'))).toMatchObject([
      { type: 'tool.result', key: 'tool:t1:result', closedBy: 'agent' },
    ]);
    expect(p.project(toolResult('t1', 'Error: Tool execution cancelled: Batch cancelled'))).toEqual([]);
    expect(p.openToolUseIds()).toEqual([]);
  });

  it('closeOpenSpans closes only spans still open, once, as runtime errors', () => {
    const p = projector();
    p.project(toolCall('a', { command: 'x' }));
    p.project(toolCall('b', { command: 'y' }));
    p.project(toolResult('a'));
    expect(p.closeOpenSpans('the agent process exited')).toEqual([
      {
        type: 'tool.result',
        key: 'tool:b:result',
        toolUseId: 'b',
        isError: true,
        output: 'tool did not finish: the agent process exited',
        closedBy: 'runtime',
      },
    ]);
    expect(p.closeOpenSpans('again')).toEqual([]);
    expect(p.project(toolResult('b'))).toEqual([]);
  });
});

describe('droid projector: messages, deltas and retries', () => {
  it('gives each delta a unique key from message, block, generation and running offset', () => {
    const p = projector();
    const drafts = [
      ...p.project(delta('m1', 'Hello')),
      ...p.project(delta('m1', ' world')),
      ...p.project(n('thinking_text_delta', { messageId: 'm2', blockIndex: 0, textDelta: 'hmm' })),
    ];
    expect(keys(drafts)).toEqual(['delta:m1:0:0:0', 'delta:m1:0:0:5', 'delta:m2:0:0:0']);
    expect(drafts[2]).toMatchObject({ type: 'assistant.delta', thinking: true });
    expect(p.project(delta('m1', ''))).toEqual([]);
  });

  it('after a retraction, keys the retried stream as a new generation and discards the partial text', () => {
    const p = projector();
    p.beginTurn('u1');
    p.project(delta('m1', 'Partial'));
    expect(p.turnText('u1')).toBe('Partial');
    expect(p.project(n('assistant_message_retracted', { messageId: 'm1' }))).toMatchObject([{ type: 'log', key: 'retract:m1:1' }]);
    expect(p.turnText('u1')).toBe('');
    expect(keys(p.project(delta('m1', 'Retried')))).toEqual(['delta:m1:0:1:0']);
    expect(keys(p.project(created(message('m1', 'assistant', [{ type: 'text', text: 'Retried' }]))))).toEqual(['msg:m1']);
  });

  it('keys a message committed, retracted and committed again as a separate observation', () => {
    const p = projector();
    p.project(created(message('m1', 'assistant', [{ type: 'text', text: 'one' }])));
    p.project(n('assistant_message_retracted', { messageId: 'm1' }));
    expect(keys(p.project(created(message('m1', 'assistant', [{ type: 'text', text: 'two' }]))))).toEqual(['msg:m1:r1']);
  });

  it('projects assistant text and thinking, drops hidden context, logs system messages', () => {
    const p = projector();
    const content = [
      { type: 'thinking', thinking: 'Let me think.' },
      { type: 'text', text: 'Answer.' },
      { type: 'tool_use', id: 't1', name: 'LS', input: { directory_path: WS } },
    ];
    expect(p.project(created(message('m1', 'assistant', content)))).toMatchObject([
      { type: 'assistant.message', key: 'msg:m1', text: 'Answer.', thinking: 'Let me think.' },
      { key: 'tool:t1:open' },
      { key: 'tool:t1:input', label: 'search: .' },
    ]);
    expect(p.project(created(message('context-u1', 'user', [], { visibility: 'llm_only' })))).toEqual([]);
    expect(p.project(created(message('x1', 'system', [{ type: 'text', text: 'BYOK Error' }], { visibility: 'user_only' })))).toEqual([
      { type: 'log', key: 'msg:x1', level: 'warn', message: 'BYOK Error' },
    ]);
    expect(
      p.project({
        notification: { type: 'create_message', message: message('u1', 'user', [{ type: 'text', text: 'hi' }]), requestId: 'f3' },
      }),
    ).toEqual([
      { type: 'native', key: 'msg:u1', nativeType: 'create_message.user', payload: { messageId: 'u1', text: 'hi', requestId: 'f3' } },
    ]);
  });

  it('records only changes of working state and settings', () => {
    const p = projector();
    const working = (state: string) => p.project(n('droid_working_state_changed', { newState: state }));
    expect(keys([...working('thinking'), ...working('idle'), ...working('idle'), ...working('thinking')])).toEqual([
      'working:e1.1',
      'working:e1.2',
      'working:e1.3',
    ]);
    const settings = () => p.project(n('settings_updated', { settings: { modelId: 'a' } }));
    expect(settings()).toHaveLength(1);
    expect(settings()).toEqual([]);
    const other = createDroidProjector({ workspace: WS, epoch: 'e2' }).project(n('droid_working_state_changed', { newState: 'thinking' }));
    expect(keys(other)).toEqual(['working:e2.1']);
  });

  it('maps permission_resolved to a decision under the key the session layer uses', () => {
    expect(projector().project(n('permission_resolved', { requestId: 'p1', toolUseIds: [], selectedOption: 'cancel' }))).toEqual([
      {
        type: 'permission.decided',
        key: droidEventKeys.permissionDecided('p1'),
        requestId: 'p1',
        decision: 'deny',
        option: 'deny',
        nativeOption: 'cancel',
        by: 'agent',
      },
    ]);
  });
});

describe('droid projector: turns', () => {
  it('reports the completion once, with usage, status and the committed text', () => {
    const p = projector();
    p.beginTurn('u1');
    p.project(delta('m1', 'I will list'));
    p.project(created(message('m1', 'assistant', [{ type: 'text', text: 'I will list.' }])));
    p.project(delta('m2', 'Done'));
    p.project(created(message('m2', 'assistant', [{ type: 'text', text: 'Done.' }])));
    const drafts = p.project(
      n('agent_turn_completed', { reason: 'completed', turnId: 'u1', tokenUsage: { inputTokens: 110, outputTokens: 11 } }),
    );
    expect(drafts).toEqual([
      { type: 'usage', key: 'turn:u1:usage', scope: 'turn', usage: { reported: true, inputTokens: 110, outputTokens: 11 } },
    ]);
    expect(p.takeCompletion()).toEqual({
      turnId: 'u1',
      reason: 'completed',
      status: 'completed',
      usage: { reported: true, inputTokens: 110, outputTokens: 11 },
      text: 'Done.',
    });
    expect(p.takeCompletion()).toBeUndefined();
    expect(p.turnText('u1')).toBe('Done.');
  });

  it('falls back to streamed text when the turn was interrupted mid-stream; no usage is reported:false', () => {
    const p = projector();
    p.project(created(message('u2', 'user', [{ type: 'text', text: 'go' }])));
    p.project(delta('m3', 'Half an ans'));
    p.project(n('agent_turn_completed', { reason: 'cancelled', turnId: 'u2' }));
    expect(p.takeCompletion()).toEqual({
      turnId: 'u2',
      reason: 'cancelled',
      status: 'interrupted',
      usage: { reported: false },
      text: 'Half an ans',
    });
  });

  it('does not attribute messages appended outside a turn to the next one', () => {
    const p = projector();
    p.project(created(message('ext-1', 'assistant', [{ type: 'text', text: 'appended' }])));
    p.beginTurn('u3');
    p.project(n('agent_turn_completed', { reason: 'error', turnId: 'u3' }));
    expect(p.takeCompletion()).toMatchObject({ status: 'failed', text: '' });
  });
});

describe('droid projector: load_session history', () => {
  const history = [
    message('context-u1', 'user', [{ type: 'text', text: '<system-reminder>' }], { visibility: 'llm_only' }),
    message('u1', 'user', [{ type: 'text', text: 'run it' }]),
    message('m1', 'assistant', [{ type: 'tool_use', id: 't1', name: 'Execute', input: { command: 'ls' } }]),
    message('r1', 'user', [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.txt' }], is_error: false }]),
    message('m2', 'assistant', [{ type: 'text', text: 'Listed.' }]),
  ];

  it('yields the keys the live projection gave the same messages', () => {
    const live = projector();
    const liveKeys = keys([
      ...live.project(created(history[1]!)),
      ...live.project(toolCall('t1')),
      ...live.project(toolCall('t1', { command: 'ls' })),
      ...live.project(created(history[2]!)),
      ...live.project(toolResult('t1', 'a.txt')),
      ...live.project(created(history[4]!)),
    ]);
    const replayed = projector().projectHistory(history);
    expect(keys(replayed)).toEqual(liveKeys);
    expect(replayed).toContainEqual({
      type: 'tool.result',
      key: 'tool:t1:result',
      toolUseId: 't1',
      isError: false,
      output: 'a.txt',
      closedBy: 'agent',
    });
  });

  it('keeps a history entry it cannot read as native instead of failing the load', () => {
    expect(projector().projectHistory([{ role: 'user' }])).toMatchObject([{ type: 'native', nativeType: 'history_message' }]);
  });
});

describe('permission and question asks', () => {
  it('builds a tool ask and its permission.requested draft', () => {
    const ask = buildPermissionAsk(
      'p1',
      {
        toolUses: [
          {
            toolUse: { id: 't1', name: 'Execute', input: { command: 'ls' } },
            details: { type: 'exec', fullCommand: 'ls', impactLevel: 'low' },
          },
        ],
        options: [{ value: 'proceed_once' }, { value: 'cancel' }],
      },
      WS,
    );
    expect(ask).toMatchObject({
      requestId: 'p1',
      kind: 'tool',
      options: ['allow-once', 'allow-session', 'deny'],
      tools: [{ command: 'ls', impact: 'low' }],
    });
    expect(askedDraft(ask)).toEqual({
      type: 'permission.requested',
      key: 'perm:p1:requested',
      requestId: 'p1',
      options: ['allow-once', 'allow-session', 'deny'],
      tools: [{ toolUseId: 't1', name: 'Execute', kind: 'execute', label: 'execute: ls' }],
    });
  });

  it('builds a question ask for droid.ask_user', () => {
    const questions = [{ index: 1, question: 'Color?', options: ['Red', 'Blue'] }];
    const ask = buildQuestionAsk('q1', { toolCallId: 't7', questions }, WS);
    expect(ask).toMatchObject({ kind: 'question', questions, tools: [{ toolUseId: 't7', name: 'AskUser' }] });
    // Questions are typed in core: multiSelect is always said (droid leaves it out when false).
    expect(askedDraft(ask)).toEqual({
      type: 'question.asked',
      key: 'question:q1:asked',
      requestId: 'q1',
      questions: [{ ...questions[0], multiSelect: false }],
    });
  });
});
