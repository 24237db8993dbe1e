import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { createFileStore, type FileStore } from '../../../core/store/index.js';
import { logEvent, sessionRecord, tempState } from './store-helpers.js';

let stateDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;

beforeEach(async () => {
  ({ stateDir, cleanup } = await tempState());
  store = await createFileStore(stateDir, { followPollMs: 10 });
  await store.writeSession(sessionRecord('s-1'));
});

afterEach(async () => {
  await cleanup();
});

// Collects followed events until `count` arrived, then aborts the follow.
async function collect(options: { afterSeq?: number }, count: number, whileFollowing: () => Promise<void>): Promise<RuntimeEvent[]> {
  const abort = new AbortController();
  const seen: RuntimeEvent[] = [];
  const reading = (async () => {
    for await (const event of store.followEvents('s-1', { ...options, signal: abort.signal })) {
      seen.push(event);
      if (seen.length === count) abort.abort();
    }
  })();
  await whileFollowing();
  await reading;
  return seen;
}

describe('followEvents', () => {
  it('yields recorded events after afterSeq, then new ones as they are appended', async () => {
    await store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
    const seen = await collect({ afterSeq: 1 }, 3, async () => {
      await store.appendEvents('s-1', [logEvent('s-1', 3)]);
      await store.appendEvents('s-1', [logEvent('s-1', 4)]);
    });
    expect(seen.map((e) => e.seq)).toEqual([2, 3, 4]);
  });

  it('waits for a log that does not exist yet', async () => {
    const seen = await collect({}, 1, () => store.appendEvents('s-1', [logEvent('s-1', 1)]));
    expect(seen.map((e) => e.seq)).toEqual([1]);
  });

  it('yields a line only once its newline is written', async () => {
    const file = path.join(stateDir, 'sessions', 's-1', 'events.jsonl');
    const line = JSON.stringify(logEvent('s-1', 1));
    const seen = await collect({}, 1, async () => {
      await appendFile(file, line.slice(0, 20));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await appendFile(file, `${line.slice(20)}\n`);
    });
    expect(seen).toEqual([logEvent('s-1', 1)]);
  });

  it('follows on when the next writer cuts a torn fragment it was holding', async () => {
    const file = path.join(stateDir, 'sessions', 's-1', 'events.jsonl');
    await appendFile(file, `${JSON.stringify(logEvent('s-1', 1))}\n{"type":"log","key":"torn-by-a-crash`);
    const seen = await collect({}, 2, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.appendEvents('s-1', [logEvent('s-1', 2)]);
    });
    expect(seen.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('returns when the signal aborts', async () => {
    const abort = new AbortController();
    const iteration = (async () => {
      const seen: RuntimeEvent[] = [];
      for await (const event of store.followEvents('s-1', { signal: abort.signal })) seen.push(event);
      return seen;
    })();
    abort.abort();
    expect(await iteration).toEqual([]);
  });
});
