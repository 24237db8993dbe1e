import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { pendingQuestions } from '../../../core/orchestrator/pending-questions.js';
import { readBounds, recentEvents, sumUsage, usageReport } from '../../../core/orchestrator/session-detail.js';
import type { SessionRecord } from '../../../core/store/index.js';

let seq = 0;
const ev = (draft: Record<string, unknown>): RuntimeEvent => {
  seq += 1;
  return { key: `k${seq}`, sessionId: 's-1', seq, at: '2026-01-01T00:00:00.000Z', ...draft } as RuntimeEvent;
};
const log = (n: number, text = 'x'): RuntimeEvent[] =>
  Array.from({ length: n }, (_, i) => ev({ type: 'log', level: 'info', message: `${text}${i}` }));
const delta = (): RuntimeEvent => ev({ type: 'assistant.delta', messageId: 'm', text: 'partial' });

describe('readSession bounds', () => {
  it('defaults to 50 events and 256 KiB, and refuses bounds outside 1-200 events and 1-256 KiB', () => {
    expect(readBounds({})).toEqual({ maxEvents: 50, maxBytes: 256 * 1024 });
    expect(readBounds({ maxEvents: 200, maxBytes: 1 })).toEqual({ maxEvents: 200, maxBytes: 1 });
    for (const bad of [{ maxEvents: 0 }, { maxEvents: 201 }, { maxEvents: 1.5 }, { maxBytes: 0 }, { maxBytes: 256 * 1024 + 1 }]) {
      expect(() => readBounds(bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: 'usage' }));
    }
  });

  it('returns the newest events oldest first, never deltas, and says when older ones were left out', () => {
    const all = [...log(3, 'old'), delta(), ...log(2, 'new'), delta()];
    const some = recentEvents(all, { maxEvents: 3, maxBytes: 1_000_000 });
    expect(some.events.map((e) => (e as { message: string }).message)).toEqual(['old2', 'new0', 'new1']);
    expect(some.truncated).toBe(true);
    const every = recentEvents(all, { maxEvents: 50, maxBytes: 1_000_000 });
    expect(every.events).toHaveLength(5);
    expect(every.events.some((e) => e.type.endsWith('.delta'))).toBe(false);
    expect(every.truncated).toBe(false);
    // Only deltas left out is not a truncation.
    expect(recentEvents([delta(), ...log(1)], { maxEvents: 1, maxBytes: 1_000_000 }).truncated).toBe(false);
  });

  it('stops at the byte bound, keeping a contiguous tail', () => {
    const all = log(10);
    const size = Buffer.byteLength(JSON.stringify(all[9]));
    const bounded = recentEvents(all, { maxEvents: 50, maxBytes: size * 3 + 2 });
    expect(bounded.events).toEqual(all.slice(7));
    expect(bounded.truncated).toBe(true);
    expect(Buffer.byteLength(bounded.events.map((e) => JSON.stringify(e)).join(''))).toBeLessThanOrEqual(size * 3 + 2);
    expect(recentEvents(all, { maxEvents: 50, maxBytes: 1 })).toEqual({ events: [], truncated: true });
  });
});

describe('usage', () => {
  it('sums reported usage per field and leaves unreported usage out', () => {
    expect(sumUsage([])).toEqual({ reported: false });
    expect(
      sumUsage([
        { reported: true, inputTokens: 10, outputTokens: 2 },
        { reported: true, inputTokens: 5, thinkingTokens: 7 },
      ]),
    ).toEqual({
      reported: true,
      inputTokens: 15,
      outputTokens: 2,
      thinkingTokens: 7,
    });
    const record = (id: string, usages: Array<SessionRecord['runs'][number]['usage']>): SessionRecord => ({
      id,
      adapter: 'droid',
      workspace: '/w',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      status: 'idle',
      runs: usages.map((usage, i) => ({ id: `r${i + 1}`, prompt: 'p', autonomy: 'low', status: 'completed', ...(usage ? { usage } : {}) })),
    });
    const report = usageReport([
      record('s-a', [
        { reported: true, inputTokens: 60, outputTokens: 4 },
        { reported: false },
        undefined,
        { reported: true, inputTokens: 60, outputTokens: 4 },
      ]),
      record('s-b', [{ reported: false }]),
    ]);
    expect(report).toEqual({
      total: { reported: true, inputTokens: 120, outputTokens: 8 },
      sessions: [
        { sessionId: 's-a', runs: 2, usage: { reported: true, inputTokens: 120, outputTokens: 8 } },
        { sessionId: 's-b', runs: 0, usage: { reported: false } },
      ],
    });
  });
});

describe('pending questions', () => {
  const started = (runId: string): RuntimeEvent => ev({ type: 'turn.started', runId, autonomy: 'low' });
  const asked = (requestId: string, question: string): RuntimeEvent =>
    ev({ type: 'question.asked', requestId, questions: [{ index: 0, topic: 'Deploy', question, options: ['yes', 'no'] }] });
  const answered = (requestId: string, cancelled: boolean, by: 'policy' | 'human'): RuntimeEvent =>
    ev({ type: 'question.answered', requestId, cancelled, answers: [], by });
  const requested = (requestId: string, label: string): RuntimeEvent =>
    ev({
      type: 'permission.requested',
      requestId,
      tools: [{ toolUseId: 't', name: 'Execute', kind: 'execute', label }],
      options: ['proceed_once', 'cancel'],
    });
  const decided = (requestId: string, decision: 'allow' | 'deny', by: 'policy' | 'human', reason?: string): RuntimeEvent =>
    ev({
      type: 'permission.decided',
      requestId,
      decision,
      option: decision === 'allow' ? 'proceed_once' : 'cancel',
      by,
      ...(reason ? { reason } : {}),
    });

  it('lists questions declined for want of a person and asks still waiting, from the latest turn only', () => {
    const events = [
      started('r1'),
      asked('q-old', 'stale?'),
      answered('q-old', true, 'policy'),
      started('r2'),
      asked('q1', 'Ship it?'),
      answered('q1', true, 'policy'),
      asked('q2', 'Answered?'),
      answered('q2', false, 'human'),
      asked('q3', 'Declined by the person?'),
      answered('q3', true, 'human'),
      requested('p1', 'rm -rf build'),
      decided('p1', 'deny', 'policy', 'no person available to decide (not a TTY)'),
      requested('p2', 'ls'),
      decided('p2', 'allow', 'policy'),
      requested('p3', 'curl x'),
      decided('p3', 'deny', 'policy', 'denied by rule'),
      asked('q4', 'Still open?'),
      requested('p4', 'make'),
    ];
    const attention = ['permission for rm -rf build was declined (no person available to decide (not a TTY)); run from a terminal…'];
    expect(pendingQuestions(events, attention)).toEqual([
      'Deploy: Ship it? (options: yes | no)',
      'permission for rm -rf build was declined: no person available to decide (not a TTY)',
      'Deploy: Still open? (options: yes | no)',
      'permission for make (waiting for a decision)',
    ]);
  });

  it('is empty when nothing was asked', () => {
    expect(pendingQuestions([started('r1'), ...log(2)])).toEqual([]);
  });
});
