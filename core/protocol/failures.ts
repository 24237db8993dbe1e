import { ERROR_CODES, OneWorksError } from '../errors.js';
import { truncateLine } from '../transport/ndjson-codec.js';
import type { RpcId, WireError } from './types.js';

// The OneWorksErrors a connection raises, built in one place so codes and data stay consistent.

/** CONNECTION_CLOSED with `message`. */
export function closedError(message: string, cause?: unknown): OneWorksError {
  return new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, message, cause === undefined ? {} : { cause });
}

/** CONNECTION_CLOSED for a request still pending at close; `cause` is the close reason. */
export function pendingClosedError(id: RpcId, method: string, reason: OneWorksError | undefined): OneWorksError {
  return new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, `the connection closed while ${method} was pending (request ${id})`, {
    data: { method, id },
    ...(reason === undefined ? {} : { cause: reason }),
  });
}

/** A failed send: the transport's own OneWorksError (CONNECTION_CLOSED, INTERNAL) or a wrapped one. */
export function sendError(method: string, error: unknown): OneWorksError {
  if (error instanceof OneWorksError) return error;
  return closedError(`could not send ${method}: ${String(error)}`, error);
}

/** PEER_ERROR for an error response; `method` is undefined when the peer gave no usable id. */
export function peerError(method: string | undefined, error: WireError): OneWorksError {
  const subject = method === undefined ? 'the peer reported an error not tied to a pending request' : `${method} failed`;
  return new OneWorksError(ERROR_CODES.PEER_ERROR, `${subject}: ${error.message} (code ${error.code})`, {
    data: { method, code: error.code, message: error.message, data: error.data },
  });
}

/** PROTOCOL_ERROR for a response whose id no pending request has. */
export function unexpectedResponseError(id: RpcId, message: unknown): OneWorksError {
  return new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `response for unknown or already settled request ${id} ignored`, {
    data: { id, frame: frameCopy(message) },
  });
}

/** PROTOCOL_ERROR for a message the envelope classified as invalid. */
export function invalidMessageError(reason: string, message: unknown): OneWorksError {
  return new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `invalid inbound message: ${reason}`, {
    data: { reason, frame: frameCopy(message) },
  });
}

// A short printable copy of an inbound frame for problem reports.
function frameCopy(message: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(message);
  } catch {
    text = undefined;
  }
  return truncateLine(text ?? String(message));
}
