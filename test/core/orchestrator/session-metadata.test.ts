import { describe, expect, it } from 'vitest';
import { applyMetadata, checkMetadata } from '../../../core/orchestrator/session-metadata.js';
import { SessionRecordSchema, type SessionRecord } from '../../../core/store/index.js';

const RECORD: SessionRecord = {
  id: 's-1',
  adapter: 'droid',
  workspace: '/w',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  title: 'old',
  labels: ['a'],
  status: 'idle',
  runs: [],
};

describe('session metadata', () => {
  it('accepts titles up to 200 characters and labels of the allowed alphabet, deduplicated', () => {
    expect(checkMetadata({ title: 'x'.repeat(200), labels: ['team:infra', 'v1.2', 'a/b-c_d', 'team:infra'] })).toEqual({
      labels: ['team:infra', 'v1.2', 'a/b-c_d'],
    });
  });

  it('refuses a long title, too many labels, a long label and a label with other characters', () => {
    expect(() => checkMetadata({ title: 'x'.repeat(201) })).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringContaining('200') }),
    );
    expect(() => checkMetadata({ labels: Array.from({ length: 33 }, (_, i) => `l${i}`) })).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringContaining('32') }),
    );
    expect(() => checkMetadata({ labels: ['x'.repeat(65)] })).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringContaining('64') }),
    );
    for (const bad of ['has space', 'semi;colon', '', 'ünicode']) {
      expect(() => checkMetadata({ labels: [bad] }), bad).toThrow(
        expect.objectContaining({ code: 'usage', message: expect.stringContaining('invalid label') }),
      );
    }
  });

  it('applies only the fields given; empty values and archived false remove them', () => {
    expect(applyMetadata(RECORD, { archived: true })).toEqual({ ...RECORD, archived: true });
    expect(applyMetadata(RECORD, { labels: ['b', 'c'] })).toEqual({ ...RECORD, labels: ['b', 'c'] });
    const cleared = applyMetadata({ ...RECORD, archived: true }, { title: '', labels: [], archived: false });
    expect(cleared).not.toHaveProperty('title');
    expect(cleared).not.toHaveProperty('labels');
    expect(cleared).not.toHaveProperty('archived');
    expect(SessionRecordSchema.parse(cleared)).toEqual(cleared);
  });

  it('parses records written before labels and archived existed, and refuses malformed ones', () => {
    const { labels: _labels, title: _title, ...old } = RECORD;
    expect(SessionRecordSchema.safeParse(old).success).toBe(true);
    expect(SessionRecordSchema.safeParse({ ...RECORD, archived: 'yes' }).success).toBe(false);
    expect(SessionRecordSchema.safeParse({ ...RECORD, labels: 'a' }).success).toBe(false);
  });
});
