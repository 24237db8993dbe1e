import { readdir, readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { createFileStore, type FileStore } from '../../../core/store/index.js';
import { permissions, sessionRecord, tempState } from './store-helpers.js';

let stateDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;

beforeEach(async () => {
  ({ stateDir, cleanup } = await tempState());
  store = await createFileStore(stateDir);
});

afterEach(async () => {
  await cleanup();
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('createFileStore', () => {
  it('creates the state directory and sessions/ with mode 0700', async () => {
    expect(permissions((await stat(stateDir)).mode)).toBe(0o700);
    expect(permissions((await stat(path.join(stateDir, 'sessions'))).mode)).toBe(0o700);
  });
});

describe('session records', () => {
  it('round-trips a record, written 0600 in a 0700 folder with no temp files left', async () => {
    const record = sessionRecord('s-1', {
      title: 'fix the bug',
      runs: [{ id: 'r-1', prompt: 'hi', autonomy: 'low', status: 'completed', usage: { reported: false } }],
    });
    await store.writeSession(record);
    await store.writeSession({ ...record, status: 'working' });
    expect(await store.readSession('s-1')).toEqual({ ...record, status: 'working' });
    const dir = path.join(stateDir, 'sessions', 's-1');
    expect(await readdir(dir)).toEqual(['session.json']);
    expect(permissions((await stat(path.join(dir, 'session.json'))).mode)).toBe(0o600);
    expect(permissions((await stat(dir)).mode)).toBe(0o700);
  });

  it('reports a missing session as session_not_found', async () => {
    const error = await failure(store.readSession('s-missing'));
    expect(isOneWorksError(error, 'session_not_found')).toBe(true);
    expect(await store.hasSession('s-missing')).toBe(false);
  });

  it('reports malformed JSON as state_corrupt naming the file, and leaves the file alone', async () => {
    const dir = path.join(stateDir, 'sessions', 's-bad');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'session.json');
    await writeFile(file, '{"id": "s-bad", ');
    const error = await failure(store.readSession('s-bad'));
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/ends too early: truncated/);
    expect(await readFile(file, 'utf8')).toBe('{"id": "s-bad", ');
  });

  // One bad record is that session's problem alone: listing goes on with the others.
  it('lists the readable records around a truncated and a schema-breaking one, and scans report both with their reason', async () => {
    await store.writeSession(sessionRecord('s-good'));
    await store.writeSession(sessionRecord('s-typo'));
    const typo = path.join(stateDir, 'sessions', 's-typo', 'session.json');
    const withTypo = JSON.stringify({ ...sessionRecord('s-typo'), runs: [{ id: 'r1', prompt: 'p', autonomy: 'low', status: 'complete' }] });
    await writeFile(typo, withTypo);
    const dir = path.join(stateDir, 'sessions', 's-cut');
    await mkdir(dir, { recursive: true });
    const cut = path.join(dir, 'session.json');
    await writeFile(cut, JSON.stringify(sessionRecord('s-cut')).slice(0, 40));
    expect((await store.listSessions()).map((r) => r.id)).toEqual(['s-good']);
    const scan = await store.scanSessions();
    expect(scan.records.map((r) => r.id)).toEqual(['s-good']);
    expect(scan.corrupt).toEqual([
      { sessionId: 's-cut', file: cut, reason: expect.stringMatching(/^not valid JSON: .*truncated/) },
      { sessionId: 's-typo', file: typo, reason: expect.stringMatching(/^runs\.0\.status: /) },
    ]);
    // Left alone: nothing rewrote them.
    expect(await readFile(typo, 'utf8')).toBe(withTypo);
  });

  it('reports a record that breaks the schema as state_corrupt', async () => {
    await store.writeSession(sessionRecord('s-2'));
    const file = path.join(stateDir, 'sessions', 's-2', 'session.json');
    const broken = JSON.stringify({ ...sessionRecord('s-2'), status: 'exploded' });
    await writeFile(file, broken);
    expect(isOneWorksError(await failure(store.readSession('s-2')), 'state_corrupt')).toBe(true);
    expect(await readFile(file, 'utf8')).toBe(broken);
  });

  it('refuses to write an invalid record', async () => {
    const bad = { ...sessionRecord('s-3'), status: 'exploded' } as unknown as Parameters<FileStore['writeSession']>[0];
    expect(isOneWorksError(await failure(store.writeSession(bad)), 'internal')).toBe(true);
    expect(await store.hasSession('s-3')).toBe(false);
  });

  it('refuses session ids that are not a safe path segment', async () => {
    for (const id of ['../escape', 'a/b', '..']) {
      expect(isOneWorksError(await failure(store.readSession(id)), 'usage')).toBe(true);
      expect(isOneWorksError(await failure(store.writeSession(sessionRecord(id))), 'usage')).toBe(true);
    }
  });

  it('lists records oldest first and skips folders that have no record yet', async () => {
    await store.writeSession(sessionRecord('s-b', { createdAt: '2025-02-01T00:00:00.000Z' }));
    await store.writeSession(sessionRecord('s-a', { createdAt: '2025-03-01T00:00:00.000Z' }));
    await mkdir(path.join(stateDir, 'sessions', 's-home-only', 'home'), { recursive: true });
    expect((await store.listSessions()).map((r) => r.id)).toEqual(['s-b', 's-a']);
    expect(await store.hasSession('s-a')).toBe(true);
  });
});
