import { expect } from 'vitest';
import { createAdmission, type Admission, type AdmissionLimits, type TurnRequest } from '../../../core/orchestrator/index.js';
import { isOneWorksError, type OneWorksError } from '../../../core/errors.js';

export const LIMITS: AdmissionLimits = { maxConcurrentRuns: 4, maxQueuedTotal: 64, maxQueuedPerSession: 8 };

/** A reader turn: autonomy off. */
export function reader(turnId: string, sessionId: string, workspace: string): TurnRequest {
  return { turnId, sessionId, workspace, writer: false };
}

/** A writer turn: any autonomy but off. */
export function writer(turnId: string, sessionId: string, workspace: string): TurnRequest {
  return { turnId, sessionId, workspace, writer: true };
}

/** An admission with `requests` enqueued in order. */
export function admissionWith(requests: TurnRequest[], limits: Partial<AdmissionLimits> = {}): Admission {
  const admission = createAdmission({ ...LIMITS, ...limits });
  for (const request of requests) admission.enqueue(request);
  return admission;
}

export const ids = (requests: TurnRequest[]): string[] => requests.map((r) => r.turnId);

/** Runs `action`, expects a OneWorksError with `code`, returns it. */
export function thrown(action: () => unknown, code: OneWorksError['code']): OneWorksError {
  let error: unknown;
  try {
    action();
  } catch (e) {
    error = e;
  }
  expect(isOneWorksError(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
  return error as OneWorksError;
}
