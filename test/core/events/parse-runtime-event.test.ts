import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRuntimeEvent, RuntimeEventSchema } from '../../../core/events/index.js';

// parseRuntimeEvent builds only the member of an event's type; it must accept and return exactly
// what the whole schema (RuntimeEventSchema) does. Checked on the events of the recorded droid
// corpus, stamped as the session layer stamps them, and on broken copies of each.

const CORPUS = fileURLToPath(new URL('../../fixtures/droid/0.225.2/', import.meta.url));

function corpus(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const file of readdirSync(CORPUS).filter((name) => name.endsWith('.events.json'))) {
    const entries = JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as Array<{ event: Record<string, unknown> }>;
    for (const { event } of entries)
      events.push({ ...event, sessionId: 's-corpus', seq: events.length + 1, at: '2026-12-02T10:00:00.000Z' });
  }
  return events;
}

// Copies of `event` the schema refuses or reads differently: each field missing or of the wrong
// type, an unknown type, extra fields (stripped), and a bad stamp.
function variants(event: Record<string, unknown>): unknown[] {
  const out: unknown[] = [
    { ...event, extra: 'dropped' },
    { ...event, type: 'no.such.type' },
    { ...event, seq: -1 },
    { ...event, seq: 1.5 },
  ];
  for (const key of Object.keys(event)) {
    const { [key]: _dropped, ...without } = event;
    out.push(without, { ...event, [key]: 42 }, { ...event, [key]: null });
  }
  return out;
}

function compare(value: unknown): void {
  const whole = RuntimeEventSchema.safeParse(value);
  const own = parseRuntimeEvent(value);
  expect(own.success, JSON.stringify(value)).toBe(whole.success);
  if (whole.success) expect(own.data).toEqual(whole.data);
}

describe('parseRuntimeEvent', () => {
  const events = corpus();

  it('accepts and returns what RuntimeEventSchema does for every recorded event', () => {
    expect(new Set(events.map((event) => event.type)).size).toBeGreaterThan(10);
    for (const event of events) compare(event);
  });

  it('refuses what RuntimeEventSchema refuses: broken copies of every recorded event, and values that are no event', () => {
    let refused = 0;
    for (const event of events) {
      for (const variant of variants(event)) {
        compare(variant);
        if (!RuntimeEventSchema.safeParse(variant).success) refused += 1;
      }
    }
    expect(refused).toBeGreaterThan(events.length * 3);
    for (const value of [null, undefined, 'session.started', 42, [], {}, { type: 'constructor' }, { type: '__proto__' }]) compare(value);
  });

  it('reads the legacy session.started version fields as version facts, as the whole schema does', () => {
    const legacy = {
      type: 'session.started',
      key: 'session:started',
      adapter: 'droid',
      workspace: '/w',
      resumed: false,
      apiVersion: '1.0.0',
      protocolVersion: '1.220.0',
      sessionId: 's-1',
      seq: 1,
      at: '2026-12-02T10:00:00.000Z',
    };
    compare(legacy);
    expect(parseRuntimeEvent(legacy).data).toMatchObject({ versionFacts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' } });
  });
});
