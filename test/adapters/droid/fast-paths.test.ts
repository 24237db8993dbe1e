import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyDroidFrame } from '../../../adapters/droid/envelope.js';
import {
  DROID_NOTIFICATION_SCHEMAS,
  parseDroidNotification,
  SessionNotificationParamsSchema,
} from '../../../adapters/droid/notifications.js';
import { DroidFrameSchema } from '../../../adapters/droid/wire.js';

// The hot path checks notification frames and text deltas by hand; these properties hold it to
// the schemas' verdicts on shapes near the valid ones (right and wrong types for every field).
const loose = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, loose);

describe('droid fast paths agree with the schemas', () => {
  it('classifyDroidFrame: a frame is a notification exactly when DroidFrameSchema reads one', () => {
    const frame = fc.record(
      {
        jsonrpc: maybe(fc.constant('2.0')),
        type: maybe(fc.constantFrom('notification', 'request', 'response')),
        method: maybe(fc.constant('droid.session_notification')),
        factoryApiVersion: maybe(fc.constant('1.0.0')),
        factoryProtocolVersion: maybe(fc.constant('1.220.0')),
        id: maybe(fc.constant('x1')),
        _meta: fc.oneof(fc.constant(undefined), fc.constant({}), fc.constant(7)),
        params: maybe(fc.constant({ a: 1 })),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(frame, (message) => {
        const parsed = DroidFrameSchema.safeParse(message);
        const inbound = classifyDroidFrame(message);
        if (parsed.success && parsed.data.type === 'notification') {
          expect(inbound).toEqual({ kind: 'notification', method: parsed.data.method, params: parsed.data.params ?? {} });
        } else {
          expect(inbound.kind).not.toBe('notification');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('parseDroidNotification: a delta is known exactly when its schema accepts it, with the same fields', () => {
    const params = fc.record(
      {
        sessionId: maybe(fc.constant('s1')),
        notification: fc.oneof(
          loose,
          fc.record(
            {
              type: maybe(fc.constantFrom('assistant_text_delta', 'thinking_text_delta')),
              messageId: maybe(fc.constant('m1')),
              textDelta: maybe(fc.string({ maxLength: 6 })),
              blockIndex: maybe(fc.constantFrom(0, 3, Number.POSITIVE_INFINITY, Number.NaN)),
              extra: maybe(fc.constant('kept')),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(params, (value) => {
        const outer = SessionNotificationParamsSchema.safeParse(value);
        const parsed = parseDroidNotification(value);
        if (!outer.success) {
          expect(parsed.kind).toBe('invalid');
          return;
        }
        const type = outer.data.notification.type;
        if (type !== 'assistant_text_delta' && type !== 'thinking_text_delta') {
          expect(parsed.kind).toBe('unknown');
          return;
        }
        const inner = DROID_NOTIFICATION_SCHEMAS[type].safeParse(outer.data.notification);
        expect(parsed.kind).toBe(inner.success ? 'known' : 'malformed');
        if (inner.success && parsed.kind === 'known') {
          expect(parsed.sessionId).toBe(outer.data.sessionId);
          expect(parsed.notification).toEqual(inner.data);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
