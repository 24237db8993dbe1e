import { describe, expect, it } from 'vitest';
import { INTERNAL_MESSAGE, adviceFor, toolErrorResult } from '../../../cli/mcp/tool-errors.js';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';

const redact = (text: string): string => text.replaceAll('s3cret-value', '[REDACTED]');

describe('toolErrorResult', () => {
  it("keeps a OneWorksError's stable code and redacted message, with retryable and an action", () => {
    const logs: string[] = [];
    const result = toolErrorResult(new OneWorksError(ERROR_CODES.QUEUE_FULL, 'queue full near s3cret-value'), redact, (line) =>
      logs.push(line),
    );
    expect(result).toEqual({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^queue_full: queue full near \[REDACTED\] — /) }],
      structuredContent: {
        error: { code: 'queue_full', message: 'queue full near [REDACTED]', retryable: true, action: adviceFor('queue_full').action },
      },
    });
    expect(logs).toEqual([]);
  });

  it('masks UUID-shaped native ids in messages', () => {
    const error = new OneWorksError(
      ERROR_CODES.SESSION_LOAD_FAILED,
      'droid could not load its session 5b531cf0-1bbd-4b7b-9050-d836012c048c',
    );
    expect(toolErrorResult(error, redact, () => undefined).structuredContent).toMatchObject({
      error: { message: 'droid could not load its session [native-id]' },
    });
  });

  it('turns foreign errors and internal ones into a generic internal error, logging the details', () => {
    for (const error of [
      new RangeError('index 7 out of s3cret-value'),
      new OneWorksError(ERROR_CODES.INTERNAL, 'invariant broken'),
      'a string',
    ]) {
      const logs: string[] = [];
      const result = toolErrorResult(error, redact, (line) => logs.push(line));
      expect(result.structuredContent).toEqual({
        error: { code: 'internal', message: INTERNAL_MESSAGE, retryable: false, action: expect.any(String) },
      });
      expect(logs).toHaveLength(1);
    }
  });

  it('has an action sentence for every stable code, and a fallback for codes it does not know', () => {
    for (const code of Object.values(ERROR_CODES)) expect(adviceFor(code).action).toMatch(/^[A-Z].*\.$/);
    expect(adviceFor('something_new')).toEqual({ retryable: false, action: expect.stringContaining('one-works doctor') });
    expect(adviceFor('queue_full').retryable).toBe(true);
    expect(adviceFor('request_key_conflict').retryable).toBe(false);
  });
});
