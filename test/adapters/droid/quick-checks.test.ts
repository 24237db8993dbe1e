import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DROID_NOTIFICATION_SCHEMAS,
  isDroidNotificationType,
  parseDroidNotification,
  QUICK_NOTIFICATION_TYPES,
} from '../../../adapters/droid/notifications.js';
import { createDroidProjector } from '../../../adapters/droid/project.js';
import { compileQuickCheck } from '../../../core/schema-check.js';

// Frequent notification types skip their schema when a check compiled from it passes, and are
// projected as they came instead of as the schema's copy (which puts declared keys first). Held
// here on every notification of the recorded corpus: (1) the check never passes a value its
// schema refuses, also after random damage to any field; (2) it passes the real notifications
// (else it would be no shortcut); (3) projecting a notification as it came and as the schema's
// copy gives byte-identical drafts, so no event (nor a key digested from content) changed.

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'droid', '0.225.2');

function corpusNotifications(): Array<Record<string, unknown> & { type: string }> {
  const out: Array<Record<string, unknown> & { type: string }> = [];
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(DIR, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const entry = JSON.parse(line) as { dir?: string; frame?: { method?: string; params?: { notification?: unknown } } };
      const n = entry.frame?.params?.notification;
      if (entry.dir === 'in' && entry.frame?.method === 'droid.session_notification' && typeof n === 'object' && n !== null) {
        out.push(n as Record<string, unknown> & { type: string });
      }
    }
  }
  return out;
}

const NOTIFICATIONS = corpusNotifications();

// Replaces the value at a random path of `value` (objects and arrays, any depth) with `replacement`.
function damage(value: unknown, pick: number[], replacement: unknown): unknown {
  if (pick.length === 0 || typeof value !== 'object' || value === null) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[pick[0]! % keys.length]!;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
  (copy as Record<string, unknown>)[key] = damage((value as Record<string, unknown>)[key], pick.slice(1), replacement);
  return copy;
}

const replacement = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 1.5, -1),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.constant([{}]),
);

describe('droid notification quick checks', () => {
  it('has corpus notifications of most quick types', () => {
    const seen = new Set(NOTIFICATIONS.map((n) => n.type));
    expect(QUICK_NOTIFICATION_TYPES.filter((t) => seen.has(t)).length).toBeGreaterThanOrEqual(8);
  });

  it('never passes what the schema refuses, and passes every real notification of its type', () => {
    const checks = new Map(QUICK_NOTIFICATION_TYPES.map((t) => [t, compileQuickCheck(DROID_NOTIFICATION_SCHEMAS[t])]));
    let passed = 0;
    for (const n of NOTIFICATIONS) {
      const check = checks.get(n.type as (typeof QUICK_NOTIFICATION_TYPES)[number]);
      if (!check) continue;
      expect(check(n), JSON.stringify(n)).toBe(true);
      passed += 1;
    }
    expect(passed).toBeGreaterThan(50);
    const quick = NOTIFICATIONS.filter((n) => checks.has(n.type as (typeof QUICK_NOTIFICATION_TYPES)[number]));
    fc.assert(
      fc.property(
        fc.nat({ max: quick.length - 1 }),
        fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 5 }),
        replacement,
        (index, pick, value) => {
          const damaged = damage(quick[index], pick, value) as { type: string };
          if (!isDroidNotificationType(damaged.type)) return;
          const check = checks.get(damaged.type as (typeof QUICK_NOTIFICATION_TYPES)[number]);
          if (check?.(damaged)) expect(DROID_NOTIFICATION_SCHEMAS[damaged.type].safeParse(damaged).success).toBe(true);
          // And whatever the shortcut did, parsing still tells a known notification from a malformed one as the schema does.
          const parsed = parseDroidNotification({ sessionId: 's', notification: damaged });
          expect(parsed.kind).toBe(DROID_NOTIFICATION_SCHEMAS[damaged.type].safeParse(damaged).success ? 'known' : 'malformed');
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('projects a notification as it came exactly as it projects the schema copy of it', () => {
    // Extra shapes the corpus lacks: a progress update without a timestamp (its key digests the
    // update) and a message of a role the projection keeps whole; keys in an unusual order.
    const extra = [
      {
        update: { fullOutput: 'a', text: 'tail', extra: 1, type: 'status' },
        toolName: 'Execute',
        toolUseId: 'x1',
        type: 'tool_progress_update',
      },
      { message: { content: [{ text: 'hi', type: 'text' }], role: 'developer', id: 'd1', zeta: 1 }, type: 'create_message' },
    ];
    const asCame = createDroidProjector({ workspace: '/w', epoch: 'e' });
    const asCopied = createDroidProjector({ workspace: '/w', epoch: 'e' });
    asCame.beginTurn('u1');
    asCopied.beginTurn('u1');
    let compared = 0;
    for (const n of [...NOTIFICATIONS, ...extra]) {
      const type = n.type as string;
      const copy = isDroidNotificationType(type) ? DROID_NOTIFICATION_SCHEMAS[type].safeParse(n) : undefined;
      const came = JSON.stringify(asCame.project({ sessionId: 's', notification: n }));
      const copied = JSON.stringify(asCopied.project({ sessionId: 's', notification: copy?.success ? copy.data : n }));
      expect(came, JSON.stringify(n)).toBe(copied);
      compared += 1;
    }
    expect(compared).toBe(NOTIFICATIONS.length + extra.length);
  });
});
