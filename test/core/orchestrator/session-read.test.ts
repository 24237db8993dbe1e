import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { MAX_EVENT_STRING_CHARS, MAX_RUN_TEXT_CHARS, recentEvents } from '../../../core/orchestrator/session-detail.js';
import { NATIVE_ID_MASK, nativeSessionIds, sessionDetail } from '../../../core/orchestrator/session-queries.js';
import type { SessionSummary } from '../../../core/orchestrator/types.js';
import type { SessionRecord } from '../../../core/store/index.js';

// readSession's detail: native session ids masked everywhere, and the whole detail bounded.

const NATIVE = '5b531cf0-1bbd-4b7b-9050-d836012c048c';
const CHILD = '9d0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const PAYLOAD_ID = 'c0ffee00-1111-4222-8333-944445555666';
const at = '2026-01-01T00:00:00.000Z';

let seq = 0;
const ev = (draft: Record<string, unknown>): RuntimeEvent => {
  seq += 1;
  return { key: `k${seq}`, sessionId: 's-1', seq, at, ...draft } as RuntimeEvent;
};
const logs = (n: number): RuntimeEvent[] => Array.from({ length: n }, (_, i) => ev({ type: 'log', level: 'info', message: `line ${i}` }));

function record(run: { prompt?: string; text?: string } = {}): SessionRecord {
  return {
    id: 's-1',
    adapter: 'droid',
    workspace: '/w',
    createdAt: at,
    updatedAt: at,
    status: 'idle',
    nativeSessionId: NATIVE,
    runs: [{ id: 'r1', prompt: run.prompt ?? 'go', autonomy: 'low', status: 'completed', text: run.text ?? 'done' }],
  };
}
const summary: SessionSummary = {
  sessionId: 's-1',
  adapter: 'droid',
  workspace: '/w',
  createdAt: at,
  updatedAt: at,
  state: 'idle',
  queueDepth: 0,
};
const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('sessionDetail: native ids', () => {
  it("collects the record's native id, every child session id and session ids in native payloads and settings, from the whole log", () => {
    const log = [
      ev({ type: 'child_session', childSessionId: CHILD }),
      ev({ type: 'native', nativeType: 'x', payload: { deep: [{ session_id: PAYLOAD_ID }] } }),
      ev({ type: 'settings.changed', settings: { nativeSessionId: 'another-native-id-000' } }),
    ];
    expect([...nativeSessionIds(record(), log)].sort()).toEqual([NATIVE, CHILD, PAYLOAD_ID, 'another-native-id-000'].sort());
  });

  it('masks them in events outside and inside the window, in tool results, latestRun text and prompt, and pending questions', () => {
    const log = [
      ev({ type: 'child_session', childSessionId: CHILD }),
      ev({ type: 'native', nativeType: 'session_info', payload: { session_id: PAYLOAD_ID } }),
      ...logs(20),
      ev({ type: 'turn.started', runId: 'r1', autonomy: 'low' }),
      ev({ type: 'tool.result', toolUseId: 't1', isError: false, output: `child ${CHILD} of ${NATIVE}, also ${PAYLOAD_ID}` }),
      ev({
        type: 'question.asked',
        requestId: 'q1',
        questions: [{ index: 0, topic: 'Resume', question: `resume ${NATIVE}?`, options: ['yes', 'no'] }],
      }),
    ];
    const detail = sessionDetail(record({ prompt: `continue ${NATIVE}`, text: `I ran in ${NATIVE} with child ${CHILD}` }), summary, log, {
      maxEvents: 3,
      maxBytes: 256 * 1024,
    });
    const text = JSON.stringify(detail);
    for (const id of [NATIVE, CHILD, PAYLOAD_ID]) expect(text).not.toContain(id);
    expect(detail.events.map((e) => e.type)).toEqual(['turn.started', 'tool.result', 'question.asked']);
    expect(detail.events[1]).toMatchObject({ output: `child ${NATIVE_ID_MASK} of ${NATIVE_ID_MASK}, also ${NATIVE_ID_MASK}` });
    expect(detail.latestRun).toMatchObject({
      prompt: `continue ${NATIVE_ID_MASK}`,
      text: `I ran in ${NATIVE_ID_MASK} with child ${NATIVE_ID_MASK}`,
    });
    expect(detail.pendingQuestions).toEqual([`Resume: resume ${NATIVE_ID_MASK}? (options: yes | no)`]);
  });
});

describe('sessionDetail: bounds', () => {
  it('cuts a huge newest tool result so it and the events before it still fit, saying how much was cut', () => {
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const log = [...logs(5), ev({ type: 'tool.result', toolUseId: 't1', isError: false, output: huge })];
    const detail = sessionDetail(record(), summary, log, { maxEvents: 50, maxBytes: 64 * 1024 });
    expect(detail.events).toHaveLength(6);
    const output = (detail.events[5] as { output: string }).output;
    expect(output).toBe(`${'x'.repeat(MAX_EVENT_STRING_CHARS)}… [${huge.length - MAX_EVENT_STRING_CHARS} chars cut]`);
    expect(detail.eventsTruncated).toBe(false);
    expect(bytes(detail)).toBeLessThanOrEqual(64 * 1024);
  });

  it("cuts an event's strings shorter than 8 KiB when that is what fits", () => {
    const log = [ev({ type: 'tool.result', toolUseId: 't1', isError: false, output: 'y'.repeat(100_000) })];
    const { events } = recentEvents(log, { maxEvents: 10, maxBytes: 3000 });
    expect(events).toHaveLength(1);
    expect((events[0] as { output: string }).output).toMatch(/^y+… \[\d+ chars cut\]$/);
    expect(bytes(events[0])).toBeLessThanOrEqual(3000);
  });

  it('cuts a long latestRun prompt and text to 32 Ki characters with a marker and truncated: true, and keeps the whole detail within maxBytes', () => {
    const long = 'z'.repeat(100_000);
    const roomy = sessionDetail(record({ prompt: long, text: long }), summary, logs(10), { maxEvents: 50, maxBytes: 256 * 1024 });
    expect(roomy.latestRun).toMatchObject({
      truncated: true,
      prompt: `${'z'.repeat(MAX_RUN_TEXT_CHARS)}… [${long.length - MAX_RUN_TEXT_CHARS} chars cut]`,
    });
    expect(roomy.latestRun?.text).toBe(roomy.latestRun?.prompt);
    expect(roomy.events).toHaveLength(10);
    for (const maxBytes of [256 * 1024, 32 * 1024, 8 * 1024, 2048]) {
      const detail = sessionDetail(
        record({ prompt: long, text: long }),
        summary,
        [...logs(30), ev({ type: 'tool.result', toolUseId: 't', isError: false, output: long })],
        { maxEvents: 200, maxBytes },
      );
      expect(bytes(detail), String(maxBytes)).toBeLessThanOrEqual(maxBytes);
      expect(detail.events.length, String(maxBytes)).toBeGreaterThan(0);
    }
    const short = sessionDetail(record(), summary, logs(1), { maxEvents: 50, maxBytes: 256 * 1024 });
    expect(short.latestRun).toEqual({ runId: 'r1', status: 'completed', prompt: 'go', text: 'done', settings: { autonomy: 'low' } });
  });
});
