import type { AdapterSession } from '../adapter.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../errors.js';

/** Default bound of `SessionRunner.renameNative`, in ms. */
export const RENAME_TIMEOUT_MS = 5_000;

/** How a bounded native rename ended. */
export type RenameResult = { ok: true } | { ok: false; unsupported: boolean; code: string; message: string };

/**
 * Calls the adapter session's optional `rename`, bounded by `timeoutMs`: on expiry the
 * rename's signal aborts and the result is `request_timeout`, whether or not the adapter
 * honours the signal. Never rejects; a session without `rename` gives `unsupported: true`.
 */
export async function renameBounded(session: AdapterSession, title: string, timeoutMs: number): Promise<RenameResult> {
  if (typeof session.rename !== 'function') {
    return { ok: false, unsupported: true, code: 'unsupported', message: 'this adapter cannot rename its native sessions' };
  }
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new OneWorksError(ERROR_CODES.REQUEST_TIMEOUT, `no confirmation within ${timeoutMs} ms`));
      controller.abort();
    }, timeoutMs);
  });
  try {
    const renamed = session.rename(title, controller.signal);
    // Settled later (aborted) when the deadline wins the race; nobody waits for it then.
    renamed.catch(() => undefined);
    await Promise.race([renamed, expired]);
    return { ok: true };
  } catch (error) {
    const code = isOneWorksError(error) ? error.code : ERROR_CODES.INTERNAL;
    return { ok: false, unsupported: false, code, message: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
