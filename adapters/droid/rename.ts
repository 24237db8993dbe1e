import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { Connection } from '../../core/protocol/index.js';
import type { Redactor } from '../../core/redact.js';
import { RenameSession } from './methods.js';

/** What `renameDroidSession` needs besides the connection. */
export interface RenameContext {
  /** Redacts what the peer says before it goes into an error message. */
  redactor: Redactor;
  /** Deadline of the request, in ms (droid once left a rename unanswered: always bounded). */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Sends `droid.rename_session {title}` over an open connection and resolves when droid answers
 * `{success:true}` (droid then writes the title into the session journal, marks it manually
 * set, and notifies `session_title_updated {updateType:"manual_rename"}`).
 *
 * Rejects with a OneWorksError whose message is redacted: `connection_closed` when there is no
 * open connection (nothing is started for a rename), the connection's own code
 * (`request_timeout`, `request_cancelled`, `peer_error`, …) when the request fails, and
 * `peer_error` when droid answers without `success: true`.
 */
export async function renameDroidSession(conn: Connection | undefined, title: string, ctx: RenameContext): Promise<void> {
  if (conn?.state !== 'open') {
    throw new OneWorksError(
      ERROR_CODES.CONNECTION_CLOSED,
      'cannot rename the droid session: no droid process is running for it (run a turn first)',
    );
  }
  let result: { success?: boolean | undefined };
  try {
    result = await conn.request(RenameSession, { title }, { timeoutMs: ctx.timeoutMs, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (error) {
    const code = isOneWorksError(error) ? error.code : ERROR_CODES.INTERNAL;
    const detail = ctx.redactor.redact(error instanceof Error ? error.message : String(error));
    throw new OneWorksError(code, `droid did not rename its session: ${detail}`, { cause: error });
  }
  if (result.success !== true) {
    throw new OneWorksError(
      ERROR_CODES.PEER_ERROR,
      `droid answered the rename without success: ${ctx.redactor.redact(JSON.stringify(result))}`,
      {
        data: { success: result.success ?? null },
      },
    );
  }
}
