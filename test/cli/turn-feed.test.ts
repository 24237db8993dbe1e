import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { TurnFeed } from '../../cli/turn-feed.js';

// Minimal events: the feed looks at type, seq, runId only.
const ev = (seq: number, type: string, extra: Record<string, unknown> = {}): RuntimeEvent =>
  ({ sessionId: 's-1', seq, at: '2026-01-01T00:00:00.000Z', key: `${type}:${seq}`, type, ...extra }) as unknown as RuntimeEvent;
const delta = (seq: number, text: string): RuntimeEvent => ev(seq, 'assistant.delta', { messageId: 'm', text });

function feed(log: RuntimeEvent[]): { feed: TurnFeed; shown: () => string[] } {
  const rendered: RuntimeEvent[] = [];
  const f = new TurnFeed({ render: (e) => rendered.push(e), readLog: async () => log.slice() });
  return { feed: f, shown: () => rendered.map((e) => (e.type === 'assistant.delta' ? `delta:${e.text}` : `${e.seq}:${e.type}`)) };
}

describe('TurnFeed', () => {
  it('fills what was sent before the subscription from the log, in seq order, once each', async () => {
    const log = [ev(1, 'turn.queued', { runId: 'r1' }), ev(2, 'session.started'), ev(3, 'turn.started', { runId: 'r1' })];
    const { feed: f, shown } = feed(log);
    f.push(ev(3, 'turn.started', { runId: 'r1' }));
    f.push(delta(3, 'Hel'));
    f.push(ev(4, 'assistant.message'));
    f.start('r1', 1);
    log.push(ev(4, 'assistant.message'), ev(5, 'turn.completed', { runId: 'r1' }));
    f.push(ev(5, 'turn.completed', { runId: 'r1' }));
    f.push(ev(6, 'session.closed'));
    await f.finish();
    expect(shown()).toEqual([
      '1:turn.queued',
      '2:session.started',
      '3:turn.started',
      'delta:Hel',
      '4:assistant.message',
      '5:turn.completed',
      '6:session.closed',
    ]);
  });

  it('reads the log at the end only when the turn did not complete live', async () => {
    let reads = 0;
    const log = [ev(1, 'turn.queued', { runId: 'r1' }), ev(2, 'turn.completed', { runId: 'r1' }), ev(3, 'log')];
    const rendered: string[] = [];
    const live = new TurnFeed({
      render: (e) => rendered.push(`${e.seq}:${e.type}`),
      readLog: async () => {
        reads += 1;
        return log.slice();
      },
    });
    live.start('r1', undefined);
    live.push(ev(1, 'turn.queued', { runId: 'r1' }));
    live.push(ev(2, 'turn.completed', { runId: 'r1' }));
    await live.finish();
    // Its completion came live (and so did all before it): the log, which only adds what came after, is not read.
    expect(rendered).toEqual(['1:turn.queued', '2:turn.completed']);
    expect(reads).toBe(0);

    const { feed: late, shown } = feed(log);
    late.start('r1', undefined);
    late.push(ev(1, 'turn.queued', { runId: 'r1' }));
    await late.finish();
    expect(shown()).toEqual(['1:turn.queued', '2:turn.completed', '3:log']);
  });

  it('shows one turn of a busy session: from its turn.queued to the session.closed after its end', async () => {
    const { feed: f, shown } = feed([]);
    // Another client's turn r1 is live when this client subscribes and sends r2.
    f.push(ev(10, 'tool.call', { runId: 'r1' }));
    f.push(delta(10, 'other'));
    f.push(ev(11, 'turn.queued', { runId: 'r2' }));
    f.start('r2', undefined, { queued: true });
    f.push(ev(12, 'turn.completed', { runId: 'r1' }));
    f.push(ev(13, 'turn.started', { runId: 'r2' }));
    f.push(ev(14, 'turn.completed', { runId: 'r2' }));
    f.push(ev(15, 'log'));
    f.push(ev(16, 'turn.started', { runId: 'r3' }));
    f.push(ev(17, 'session.closed'));
    await f.finish();
    expect(shown()).toEqual(['11:turn.queued', '13:turn.started', '14:turn.completed', '15:log']);
  });

  it("shows the orchestrator's notes about a queued turn while the previous turn is still live", async () => {
    const { feed: f, shown } = feed([]);
    f.push(ev(10, 'tool.call', { runId: 'r1' }));
    f.push(ev(11, 'turn.queued', { runId: 'r2' }));
    f.push({ ...ev(12, 'log', { level: 'warn', message: 'note: x' }), key: 'turn:r2:note:0' } as RuntimeEvent);
    f.push(ev(13, 'log', { level: 'warn', message: 'about r1' }));
    f.start('r2', undefined, { queued: true });
    f.push(ev(14, 'turn.completed', { runId: 'r1' }));
    f.push(ev(15, 'turn.started', { runId: 'r2' }));
    f.push(ev(16, 'turn.completed', { runId: 'r2' }));
    await f.finish();
    expect(shown()).toEqual(['11:turn.queued', '12:log', '15:turn.started', '16:turn.completed']);
  });

  it('shows nothing after finish: the outcome printed next is the last line (a fleet follow can deliver the closing late)', async () => {
    const { feed: f, shown } = feed([]);
    f.start('r1', undefined);
    f.push(ev(1, 'turn.queued', { runId: 'r1' }));
    f.push(ev(2, 'turn.completed', { runId: 'r1' }));
    await f.finish();
    f.push(ev(3, 'session.closed'));
    f.push(delta(3, 'late'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(shown()).toEqual(['1:turn.queued', '2:turn.completed']);
  });

  it('at the end, adds what only the log has', async () => {
    const log = [ev(1, 'turn.queued', { runId: 'r1' }), ev(2, 'turn.completed', { runId: 'r1' }), ev(3, 'session.closed')];
    const { feed: f, shown } = feed(log);
    f.start('r1', 1);
    await f.finish();
    expect(shown()).toEqual(['1:turn.queued', '2:turn.completed', '3:session.closed']);
  });
});
