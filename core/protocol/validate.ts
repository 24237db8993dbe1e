import type { z } from 'zod';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RequestDescriptor } from './types.js';

// At most this many zod issues are spelled out in a message.
const MAX_LISTED_ISSUES = 5;

/**
 * Checks outbound params against the descriptor and returns the parsed value to send. Failing
 * params are a bug in the caller: OneWorksError INTERNAL, and nothing is sent.
 */
export function assertParams<P, R>(descriptor: RequestDescriptor<P, R>, params: P): P {
  const parsed = descriptor.params.safeParse(params);
  if (parsed.success) return parsed.data;
  const issues = summarizeIssues(parsed.error);
  throw new OneWorksError(ERROR_CODES.INTERNAL, `invalid params for ${descriptor.method}: ${issues}`, {
    data: { method: descriptor.method, issues },
    cause: parsed.error,
  });
}

/** Parses a peer's result with the descriptor; a mismatch is the peer's fault: PROTOCOL_ERROR. */
export function parseResult<P, R>(descriptor: RequestDescriptor<P, R>, raw: unknown): R {
  const parsed = descriptor.result.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = summarizeIssues(parsed.error);
  throw new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `${descriptor.method} returned an unexpected result: ${issues}`, {
    data: { method: descriptor.method, issues },
    cause: parsed.error,
  });
}

/** One line naming each failing path and what was wrong, e.g. `sessionId: expected string`. */
export function summarizeIssues(error: z.ZodError): string {
  const listed = error.issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    const path = issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
    return `${path}: ${issue.message}`;
  });
  const more = error.issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}
