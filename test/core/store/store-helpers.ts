import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RuntimeEvent } from '../../../core/events/index.js';
import type { SessionRecord } from '../../../core/store/index.js';

/** A fresh state directory path (not yet created) under a temp folder, and its cleanup. */
export async function tempState(): Promise<{ stateDir: string; cleanup: () => Promise<void> }> {
  const base = await mkdtemp(path.join(tmpdir(), 'one-works-store-'));
  return { stateDir: path.join(base, 'state'), cleanup: () => rm(base, { recursive: true, force: true }) };
}

/** A valid session record. */
export function sessionRecord(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    adapter: 'droid',
    workspace: '/work/ws',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
    status: 'idle',
    runs: [],
    ...overrides,
  };
}

/** A valid stamped `log` event. */
export function logEvent(sessionId: string, seq: number, key = `k-${seq}`): RuntimeEvent {
  return { type: 'log', key, level: 'info', message: `event ${seq}`, sessionId, seq, at: '2025-01-01T00:00:00.000Z' };
}

/** The octal permission bits of a stat mode. */
export function permissions(mode: number): number {
  return mode & 0o777;
}
