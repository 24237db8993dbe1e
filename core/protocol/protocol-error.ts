import type { WireError } from './types.js';

/** The JSON-RPC 2.0 error codes One Works sends and recognises. */
export const JSONRPC_ERROR_CODES = {
  /** The peer could not parse what it received. */
  PARSE_ERROR: -32700,
  /** The message is not a valid request. */
  INVALID_REQUEST: -32600,
  /** No handler for the method. */
  METHOD_NOT_FOUND: -32601,
  /** The params did not match what the method expects. */
  INVALID_PARAMS: -32602,
  /** The handler failed unexpectedly. */
  INTERNAL_ERROR: -32603,
} as const;

/**
 * An error meant for the wire: a numeric JSON-RPC code, a message and optional data. The only
 * kind of error that crosses to the peer. An inbound request handler throws one to choose the
 * error response; any other thrown error is answered with INTERNAL_ERROR. Locally, failures are
 * OneWorksErrors, never this.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }

  /** -32601 for a method nobody handles. */
  static methodNotFound(method: string): ProtocolError {
    return new ProtocolError(JSONRPC_ERROR_CODES.METHOD_NOT_FOUND, `method not found: ${method}`, { method });
  }

  /** -32602 for params a handler cannot accept. */
  static invalidParams(message = 'invalid params', data?: unknown): ProtocolError {
    return new ProtocolError(JSONRPC_ERROR_CODES.INVALID_PARAMS, message, data);
  }

  /** -32603 for an unexpected failure inside a handler. */
  static internalError(message = 'internal error', data?: unknown): ProtocolError {
    return new ProtocolError(JSONRPC_ERROR_CODES.INTERNAL_ERROR, message, data);
  }

  /** The `{ code, message, data? }` object an envelope wraps into an error response. */
  toWireError(): WireError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
