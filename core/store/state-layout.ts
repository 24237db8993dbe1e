import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * Where things live under `<state>` (see docs/architecture.md, "State layout"). The store and
 * the sandbox both derive their paths from here, so a session id can never name a path outside
 * `<state>/sessions/`.
 */

/** A session id: a safe single path segment. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The single-owner lock file. */
export const OWNER_FILE = 'owner.json';
/** The directory holding one folder per session. */
export const SESSIONS_DIR = 'sessions';
/** A session's record, replaced atomically. */
export const SESSION_FILE = 'session.json';
/** A session's append-only event log. */
export const EVENTS_FILE = 'events.jsonl';
/** A session's isolated HOME. */
export const HOME_DIR = 'home';

/** Throws OneWorksError `usage` unless `sessionId` matches SESSION_ID_PATTERN (no `/`, no `..`). */
export function assertSessionId(sessionId: string): void {
  if (!SESSION_ID_PATTERN.test(sessionId) || sessionId.includes('..')) {
    throw new OneWorksError(ERROR_CODES.USAGE, `invalid session id ${JSON.stringify(sessionId)}: use letters, digits, '.', '_' and '-'`, {
      data: { sessionId },
    });
  }
}

/** `<state>/sessions/<id>`; validates the id and requires an absolute state dir. */
export function sessionDir(stateDir: string, sessionId: string): string {
  if (!path.isAbsolute(stateDir)) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `state directory must be an absolute path, got ${stateDir}`);
  }
  assertSessionId(sessionId);
  return path.join(stateDir, SESSIONS_DIR, sessionId);
}
