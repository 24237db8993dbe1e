import { describe, expect, it } from 'vitest';
import { completeHandle } from '../../../core/orchestrator/turn-handles.js';
import type { SessionRecord } from '../../../core/store/index.js';

const record = (extra: Partial<SessionRecord> = {}): SessionRecord => ({
  id: 's-aaaaaaaaaa',
  adapter: 'droid',
  workspace: '/w',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  status: 'idle',
  runs: [],
  ...extra,
});

describe('completeHandle', () => {
  const handle = { sessionId: 's-aaaaaaaaaa', runId: 'r1', state: 'queued' as const };

  it('keeps the settings a handle carries', () => {
    const settings = { model: 'm', autonomy: 'off' as const };
    expect(completeHandle({ ...handle, settings }, record(), () => 'high')).toEqual({ ...handle, settings });
  });

  it("takes the run's recorded settings", () => {
    const withRun = record({ runs: [{ id: 'r1', prompt: 'p', status: 'completed', model: 'm', effort: 'low', autonomy: 'medium' }] });
    expect(completeHandle(handle, withRun, () => 'high').settings).toEqual({ model: 'm', effort: 'low', autonomy: 'medium' });
  });

  it("falls back to the pending autonomy, then to the adapter's default rather than a fixed level", () => {
    expect(completeHandle(handle, record({ pending: { autonomy: 'off' } }), () => 'high').settings).toEqual({ autonomy: 'off' });
    expect(completeHandle(handle, record(), () => 'high').settings).toEqual({ autonomy: 'high' });
  });
});
