import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { SessionBook } from '../../../core/orchestrator/session-book.js';
import { Redactor } from '../../../core/redact.js';
import type { RunRecord, SessionRecord, Store } from '../../../core/store/index.js';

// A store that keeps what it was given: the last record written and every appended event.
function memoryStore(): { store: Store; written: SessionRecord[]; logged: RuntimeEvent[] } {
  const written: SessionRecord[] = [];
  const logged: RuntimeEvent[] = [];
  const store = {
    writeSession: (record: SessionRecord) => Promise.resolve(void written.push(record)),
    appendEvents: (_id: string, events: readonly RuntimeEvent[]) => Promise.resolve(void logged.push(...events)),
  } as unknown as Store;
  return { store, written, logged };
}

const run = (id: string, status: RunRecord['status']): RunRecord => ({ id, prompt: id, autonomy: 'low', status });
const at = '2026-01-01T00:00:00.000Z';
const base: SessionRecord = {
  id: 's-1234567890',
  adapter: 'droid',
  workspace: '/w',
  createdAt: at,
  updatedAt: at,
  status: 'idle',
  runs: [],
};

describe('SessionBook', () => {
  it('merges a runner write over the prefix it saw and keeps the queued runs behind it', async () => {
    const { store, written } = memoryStore();
    const book = new SessionBook({
      store,
      record: { ...base, runs: [run('r1', 'completed'), run('r2', 'queued'), run('r3', 'queued')] },
      lastSeq: 0,
      redactor: new Redactor(),
      onChange: () => {},
    });
    const view = book.runnerView(1);
    expect(view.runs.map((r) => r.id)).toEqual(['r1']);
    await book.mergeFromRunner({ ...view, nativeSessionId: 'n-1', runs: [...view.runs, run('r2', 'running')] });
    expect(book.record.runs.map((r) => [r.id, r.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'running'],
      ['r3', 'queued'],
    ]);
    expect(written.at(-1)).toMatchObject({ nativeSessionId: 'n-1', runs: book.record.runs });
    await expect(book.mergeFromRunner({ ...view, runs: [run('r1', 'completed'), run('r9', 'running')] })).rejects.toMatchObject({
      code: 'internal',
    });
  });

  it('numbers orchestrator and runner events in one sequence and logs them in that order', async () => {
    const { store, logged } = memoryStore();
    const book = new SessionBook({ store, record: base, lastSeq: 4, redactor: new Redactor(), onChange: () => {} });
    const seen: number[] = [];
    book.subscribe((event) => seen.push(event.seq));
    const fromRunner = (key: string, seq: number): RuntimeEvent => ({
      type: 'log',
      key,
      level: 'info',
      message: key,
      sessionId: base.id,
      seq,
      at,
    });
    book.forward(fromRunner('runner-a', 1));
    book.emit({ type: 'turn.queued', key: 'turn:r2:queued', runId: 'r2', prompt: 'p' });
    // The runner appends its event after the orchestrator's was numbered: the log still follows the numbers.
    await book.appendFromRunner([fromRunner('runner-a', 1)]);
    await book.flush();
    expect(seen).toEqual([5, 6]);
    expect(logged.map((event) => [event.seq, event.key])).toEqual([
      [5, 'runner-a'],
      [6, 'turn:r2:queued'],
    ]);
  });
});
