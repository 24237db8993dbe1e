import { ERROR_CODES, isOneWorksError } from '../../core/errors.js';
import type { CreateSessionRequest, SendMessageRequest, TurnHandle } from '../../core/orchestrator/index.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { FleetClient } from './fleet-client.js';

/**
 * How long `submit` (and `run --detach`) in a fleet waits for a worker to accept the new
 * session before it returns with the session queued: long enough that an idle fleet's answer
 * (the handle, or the worker's refusal with its code) reaches the command; a busy fleet's
 * request stays queued and the command does not wait for room.
 */
export const SUBMIT_ACCEPT_MS = 5000;

/** What `submit` prints for a create no worker took within {@link SUBMIT_ACCEPT_MS}. */
export interface QueuedSubmit {
  sessionId: string;
  requestId: number;
  state: 'queued';
}

/**
 * `submit` / `run --detach` (a create) and `send-queued` (a send) in a fleet: queues the
 * request and prints what `text` says (default: the session id; with --json, the handle once a
 * worker accepted it, else `{sessionId, requestId, state: "queued"}`). A worker's refusal within
 * the wait is this command's error, with the worker's code.
 */
export async function submitToFleet(
  ctx: CliContext,
  client: FleetClient,
  request: CreateSessionRequest | SendMessageRequest,
  text: (handle: TurnHandle | QueuedSubmit) => string = (handle) => handle.sessionId,
): Promise<number> {
  const { requestId, sessionId } = 'adapter' in request ? await client.submitCreate(request) : await client.submitSend(request);
  const waited = AbortSignal.timeout(SUBMIT_ACCEPT_MS);
  let handle: TurnHandle | QueuedSubmit;
  try {
    handle = await client.accepted(requestId, waited);
  } catch (error) {
    if (!waited.aborted || !isOneWorksError(error, ERROR_CODES.REQUEST_CANCELLED)) throw error;
    handle = { sessionId, requestId, state: 'queued' };
    const what = 'adapter' in request ? `session ${sessionId}` : `the turn of session ${sessionId}`;
    ctx.out.info(
      `${what} is queued in the fleet: no worker took it within ${SUBMIT_ACCEPT_MS / 1000} s (\`one-works fleet\` shows the workers)`,
    );
  }
  ctx.out.result(handle, () => text(handle));
  return EXIT.ok;
}

/** Where a fleet session's record and events are, for result lines: the database, never its URL. */
export function fleetLocation(where: string): (sessionId: string) => { record: string; events: string } {
  return (sessionId) => ({ record: `${where} (sessions, id ${sessionId})`, events: `${where} (events, session ${sessionId})` });
}
