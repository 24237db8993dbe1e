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
    await failure(store.listSessions());
    expect(await readFile(file, 'utf8')).toBe('{"id": "s-bad", ');
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
