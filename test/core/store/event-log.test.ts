import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { createFileStore, type FileStore } from '../../../core/store/index.js';
import { logEvent, permissions, sessionRecord, tempState } from './store-helpers.js';

let stateDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
let logFile: string;

beforeEach(async () => {
  ({ stateDir, cleanup } = await tempState());
  store = await createFileStore(stateDir);
  await store.writeSession(sessionRecord('s-1'));
  logFile = path.join(stateDir, 'sessions', 's-1', 'events.jsonl');
});

afterEach(async () => {
  await cleanup();
});

describe('event log', () => {
  it('appends batches as JSON lines in a 0600 file and reads them back', async () => {
    await store.appendEvents('s-1', [logEvent('s-1', 1), logEvent('s-1', 2)]);
    await store.appendEvents('s-1', [logEvent('s-1', 3)], { fsync: true });
    expect((await store.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await store.readEvents('s-1', { afterSeq: 2 })).map((e) => e.seq)).toEqual([3]);
    expect((await readFile(logFile, 'utf8')).split('\n')).toHaveLength(4);
    expect(permissions((await stat(logFile)).mode)).toBe(0o600);
  });

  it('keeps call order across concurrent appends', async () => {
    await Promise.all([1, 2, 3, 4, 5].map((seq) => store.appendEvents('s-1', [logEvent('s-1', seq)])));
    expect((await store.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads an empty log when nothing was appended yet', async () => {
    expect(await store.readEvents('s-1')).toEqual([]);
    expect(await store.eventIndex('s-1')).toEqual({ keys: new Set(), lastSeq: 0 });
  });

  it('refuses events of another session or of no known type', async () => {
    const error = await store.appendEvents('s-1', [logEvent('s-2', 1)]).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'internal')).toBe(true);
    const bogus = { ...logEvent('s-1', 1), type: 'bogus' } as unknown as ReturnType<typeof logEvent>;
    expect(isOneWorksError(await store.appendEvents('s-1', [bogus]).catch((e: unknown) => e), 'internal')).toBe(true);
    expect(await readdir(path.dirname(logFile))).toEqual(['session.json']);
  });

  it('continues seq and dedup keys after reopening the state', async () => {
    await store.appendEvents('s-1', [logEvent('s-1', 1, 'tool:a'), logEvent('s-1', 2, 'tool:b')]);
    const reopened = await createFileStore(stateDir);
    expect(await reopened.eventIndex('s-1')).toEqual({ keys: new Set(['tool:a', 'tool:b']), lastSeq: 2 });
    await reopened.appendEvents('s-1', [logEvent('s-1', 3, 'tool:c')]);
    expect((await reopened.eventIndex('s-1')).lastSeq).toBe(3);
  });
});

describe('event log after a crash', () => {
  it('ignores a torn final line, and the next writer cuts it off', async () => {
    await store.appendEvents('s-1', [logEvent('s-1', 1)]);
    await appendFile(logFile, JSON.stringify(logEvent('s-1', 2)).slice(0, 25));
    const reopened = await createFileStore(stateDir);
    expect((await reopened.readEvents('s-1')).map((e) => e.seq)).toEqual([1]);
    expect((await reopened.eventIndex('s-1')).lastSeq).toBe(1);
    await reopened.appendEvents('s-1', [logEvent('s-1', 2)]);
    expect((await reopened.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2]);
    expect((await readFile(logFile, 'utf8')).endsWith('\n')).toBe(true);
  });

  it('an fsynced append (asynchronous calls) cuts a torn line off and keeps a final event without its newline the same way', async () => {
    await store.appendEvents('s-1', [logEvent('s-1', 1)]);
    await appendFile(logFile, JSON.stringify(logEvent('s-1', 2)).slice(0, 25));
    const reopened = await createFileStore(stateDir);
    await reopened.appendEvents('s-1', [logEvent('s-1', 2)], { fsync: true });
    expect((await reopened.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2]);
    await writeFile(logFile, `${JSON.stringify(logEvent('s-1', 1))}\n${JSON.stringify(logEvent('s-1', 2))}`);
    const again = await createFileStore(stateDir);
    await again.appendEvents('s-1', [logEvent('s-1', 3)], { fsync: true });
    expect((await again.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await readFile(logFile, 'utf8')).endsWith('\n')).toBe(true);
  });

  it('keeps a final event that only lost its newline', async () => {
    await writeFile(logFile, `${JSON.stringify(logEvent('s-1', 1))}\n${JSON.stringify(logEvent('s-1', 2))}`);
    expect((await store.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2]);
    await store.appendEvents('s-1', [logEvent('s-1', 3)]);
    expect((await store.readEvents('s-1')).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('reports any other malformed line as state_corrupt naming the file and line', async () => {
    const content = `${JSON.stringify(logEvent('s-1', 1))}\nnot json\n${JSON.stringify(logEvent('s-1', 3))}\n`;
    await writeFile(logFile, content);
    const error = await store.readEvents('s-1').catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    expect((error as Error).message).toContain(`${logFile} is malformed at line 2`);
    expect(isOneWorksError(await store.eventIndex('s-1').catch((e: unknown) => e), 'state_corrupt')).toBe(true);
    expect(await readFile(logFile, 'utf8')).toBe(content);
  });
});

// `sessions` and `events` open the store with synchronous reads: the same events, the same faults.
describe('event log read synchronously', () => {
  it('reads an empty log, a torn final line, a final event without its newline, and a malformed line as the asynchronous reads do', async () => {
    const sync = await createFileStore(stateDir, { syncReads: true });
    expect(await sync.readEvents('s-1')).toEqual([]);
    await store.appendEvents('s-1', [logEvent('s-1', 1)]);
    await appendFile(logFile, JSON.stringify(logEvent('s-1', 2)).slice(0, 25));
    expect((await sync.readEvents('s-1')).map((e) => e.seq)).toEqual([1]);
    await writeFile(logFile, `${JSON.stringify(logEvent('s-1', 1))}\n${JSON.stringify(logEvent('s-1', 2))}`);
    expect((await sync.readEvents('s-1', { afterSeq: 1 })).map((e) => e.seq)).toEqual([2]);
    expect(await sync.readEvents('s-1')).toEqual(await store.readEvents('s-1'));
    await writeFile(logFile, `${JSON.stringify(logEvent('s-1', 1))}\nnot json\n`);
    const error = await sync.readEvents('s-1').catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    expect((error as Error).message).toContain(`${logFile} is malformed at line 2`);
  });
});

// `sessions` reads only the `settings.changed` events of a log (an untitled session's agent title).
describe('event log read for some types', () => {
  const title = (seq: number, value: string): RuntimeEvent => ({
    type: 'settings.changed',
    key: `title:${seq}`,
    settings: { title: value, titleSource: 'llm_generated' },
    sessionId: 's-1',
    seq,
    at: '2025-01-01T00:00:00.000Z',
  });

  it('returns the events of those types as a full read has them, after thousands of other lines', async () => {
    const others = Array.from({ length: 3000 }, (_, i) => logEvent('s-1', i + 2));
    await store.appendEvents('s-1', [title(1, 'first'), ...others, title(3002, 'far into the log'), logEvent('s-1', 3003)]);
    const all = await store.readEvents('s-1');
    const titles = await store.readEvents('s-1', { types: ['settings.changed'] });
    expect(titles.map((e) => e.seq)).toEqual([1, 3002]);
    expect(titles).toEqual(all.filter((e) => e.type === 'settings.changed'));
    expect(await store.readEvents('s-1', { types: ['settings.changed'], afterSeq: 1 })).toEqual([all.at(-2)]);
  });

  it('still reports a malformed line of another type as state_corrupt, and ignores a torn final line', async () => {
    await store.appendEvents('s-1', [title(1, 'mine')]);
    await appendFile(logFile, JSON.stringify(logEvent('s-1', 2)).slice(0, 25));
    expect((await store.readEvents('s-1', { types: ['settings.changed'] })).map((e) => e.seq)).toEqual([1]);
    // Valid JSON of a known type that the schema refuses (a level it does not know).
    const bad = { ...logEvent('s-1', 2), level: 'loud' };
    await writeFile(logFile, `${JSON.stringify(title(1, 'mine'))}\n${JSON.stringify(bad)}\n`);
    const error = await store.readEvents('s-1', { types: ['settings.changed'] }).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    expect((error as Error).message).toContain(`${logFile} is malformed at line 2`);
    await writeFile(logFile, `${JSON.stringify(title(1, 'mine'))}\nnot json\n`);
    expect(isOneWorksError(await store.readEvents('s-1', { types: ['settings.changed'] }).catch((e: unknown) => e), 'state_corrupt')).toBe(
      true,
    );
  });
});
