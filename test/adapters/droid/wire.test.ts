import { describe, expect, it } from 'vitest';
import { DROID_METHODS, InitializeSession } from '../../../adapters/droid/methods.js';
import { DROID_NOTIFICATION_SCHEMAS, parseDroidNotification, type DroidNotificationType } from '../../../adapters/droid/notifications.js';
import {
  AddUserMessageParamsSchema,
  AskUserAnswerSchema,
  InitializeSessionParamsSchema,
  RequestPermissionAnswerSchema,
  RequestPermissionParamsSchema,
} from '../../../adapters/droid/wire.js';
import { DROID_NOTIFICATION_SAMPLES, notificationParams } from '../../support/droid-notification-samples.js';

const TYPES = Object.keys(DROID_NOTIFICATION_SCHEMAS) as DroidNotificationType[];

describe('droid notification union', () => {
  it('covers the 37 notification types of droid 0.225.2', () => {
    expect(TYPES).toHaveLength(37);
    expect(new Set(TYPES).size).toBe(37);
  });

  it.each(TYPES)('parses a minimal %s notification as known', (type) => {
    const parsed = parseDroidNotification(notificationParams(type));
    expect(parsed.kind).toBe('known');
    if (parsed.kind === 'known') expect(parsed.notification.type).toBe(type);
  });

  it('keeps fields droid adds in later versions (lenient)', () => {
    const parsed = parseDroidNotification(notificationParams('tool_result', { newField: { nested: true } }));
    expect(parsed).toMatchObject({ kind: 'known', notification: { type: 'tool_result', newField: { nested: true } } });
  });

  it('parses a notification without sessionId (droid omits it on several types)', () => {
    const parsed = parseDroidNotification({ notification: { type: 'tool_call', ...DROID_NOTIFICATION_SAMPLES.tool_call } });
    expect(parsed).toMatchObject({ kind: 'known', sessionId: undefined });
  });

  it('reports an unknown type as unknown with the raw notification, without throwing', () => {
    const raw = { type: 'brand_new_thing', detail: 1 };
    expect(parseDroidNotification({ sessionId: 's1', notification: raw })).toEqual({
      kind: 'unknown',
      sessionId: 's1',
      type: 'brand_new_thing',
      raw,
    });
  });

  it('reports a known type with a missing required field as malformed, naming the field', () => {
    const parsed = parseDroidNotification({ notification: { type: 'tool_result', content: 'x' } });
    expect(parsed.kind).toBe('malformed');
    if (parsed.kind === 'malformed') expect(parsed.reason).toContain('toolUseId');
  });

  it.each([[undefined], [null], ['text'], [{}], [{ notification: {} }], [{ notification: { type: 7 } }]])(
    'reports params %j as invalid',
    (params) => {
      expect(parseDroidNotification(params).kind).toBe('invalid');
    },
  );
});

describe('droid params we send (strict)', () => {
  it('accepts the initialize params the session sends', () => {
    const params = { machineId: 'one-works', cwd: '/w', autonomyLevel: 'low', interactionMode: 'auto', title: 't' };
    expect(InitializeSessionParamsSchema.parse(params)).toEqual(params);
  });

  it('rejects a misspelled field instead of sending it', () => {
    expect(InitializeSessionParamsSchema.safeParse({ machineId: 'm', cwd: '/w', autonmyLevel: 'low' }).success).toBe(false);
    expect(AddUserMessageParamsSchema.safeParse({ text: 'hi', queuePlacement: 'soon' }).success).toBe(false);
  });

  it('keeps method name and schemas together in a descriptor', () => {
    expect(InitializeSession.method).toBe(DROID_METHODS.initializeSession);
    expect(InitializeSession.params).toBe(InitializeSessionParamsSchema);
    expect(Object.values(DROID_METHODS).every((m) => m.startsWith('droid.'))).toBe(true);
  });
});

describe('droid server requests and our answers', () => {
  it('parses a batched request_permission and rejects one without toolUses', () => {
    const params = {
      toolUses: [
        {
          toolUse: { type: 'tool_use', id: 'a', name: 'Execute', input: { command: 'ls' } },
          confirmationType: 'exec',
          details: { type: 'exec', fullCommand: 'ls' },
        },
        {
          toolUse: { type: 'tool_use', id: 'b', name: 'Execute', input: { command: 'pwd' } },
          confirmationType: 'exec',
          details: { type: 'exec', fullCommand: 'pwd' },
        },
      ],
      options: [
        { label: 'Yes, allow all', value: 'proceed_once' },
        { label: 'No, cancel all', value: 'cancel' },
      ],
    };
    expect(RequestPermissionParamsSchema.parse(params).toolUses).toHaveLength(2);
    expect(RequestPermissionParamsSchema.safeParse({ options: [] }).success).toBe(false);
  });

  it('answers are strict: selectedOption required, answers need index/question/answer', () => {
    expect(RequestPermissionAnswerSchema.safeParse({ selectedOption: 'proceed_once' }).success).toBe(true);
    expect(RequestPermissionAnswerSchema.safeParse({ option: 'proceed_once' }).success).toBe(false);
    expect(AskUserAnswerSchema.safeParse({ cancelled: true, answers: [] }).success).toBe(true);
    expect(AskUserAnswerSchema.safeParse({ answers: [{ index: 1, answer: 'Blue' }] }).success).toBe(false);
  });
});
