import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { ProtocolLogger } from './logger.js';
import { JSONRPC_ERROR_CODES, ProtocolError } from './protocol-error.js';
import type { Envelope, HandlerContext, RpcId, WireError } from './types.js';

/**
 * Answers one inbound request. Its return value is sent as the result. Throw a ProtocolError to
 * choose the error response; anything else thrown is answered with -32603 and its message.
 */
export type RequestHandler = (params: unknown, ctx: HandlerContext) => Promise<unknown> | unknown;

/** Observes one inbound notification. Runs synchronously, in arrival order; must not block. */
export type NotificationListener = (method: string, params: unknown) => void;

export interface DispatcherDeps {
  envelope: Envelope;
  /** Aborts when the connection closes: handlers see it as `ctx.signal`, and no response is sent after. */
  signal: AbortSignal;
  send(message: unknown): Promise<void>;
  report(problem: OneWorksError): void;
  logger: ProtocolLogger;
}

/**
 * Routes inbound requests to their handlers and notifications to listeners. Request handlers run
 * concurrently: a slow handler never holds back other traffic. Exactly one response is written
 * per request, unless the connection closed while the handler ran, in which case none is.
 */
export class InboundDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #handlers = new Map<string, RequestHandler>();
  readonly #listeners = new Set<NotificationListener>();

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
  }

  /** Sets the handler of `method`, replacing any earlier one. Returns a function that removes it. */
  setHandler(method: string, handler: RequestHandler): () => void {
    this.#handlers.set(method, handler);
    return () => {
      if (this.#handlers.get(method) === handler) this.#handlers.delete(method);
    };
  }

  /** Adds a notification listener. Returns a function that removes it. */
  addListener(listener: NotificationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts handling one inbound request; returns at once. Its response carries `id` unchanged (a number stays a number). */
  dispatchRequest(id: RpcId, method: string, params: unknown): void {
    const handler = this.#handlers.get(method);
    if (handler === undefined) {
      this.#deps.logger.debug('no handler for inbound request', { id, method });
      this.#respond(id, method, () => this.#deps.envelope.errorResponse(id, ProtocolError.methodNotFound(method).toWireError()));
      return;
    }
    const ctx: HandlerContext = { signal: this.#deps.signal, id };
    // Run on a later microtask so that a synchronous throw is handled like a rejection.
    Promise.resolve()
      .then(() => handler(params, ctx))
      .then(
        // JSON has no undefined: a handler that returns nothing answers with null.
        (result) => this.#respond(id, method, () => this.#deps.envelope.response(id, result === undefined ? null : result)),
        (error: unknown) => this.#respond(id, method, () => this.#deps.envelope.errorResponse(id, toWireError(error))),
      );
  }

  /** Hands one inbound notification to every listener; a throwing listener is reported, not fatal. */
  dispatchNotification(method: string, params: unknown): void {
    const listeners = this.#listeners;
    if (listeners.size === 0) this.#deps.logger.debug('inbound notification with no listener', { method });
    // One listener (the usual case) is called without copying the set first; several are called
    // from a copy, so that a listener added or removed meanwhile does not change this round.
    if (listeners.size === 1) {
      for (const listener of listeners) {
        this.#notify(listener, method, params);
        break;
      }
      return;
    }
    for (const listener of [...listeners]) this.#notify(listener, method, params);
  }

  // Calls one listener; a throw is reported, not fatal.
  #notify(listener: NotificationListener, method: string, params: unknown): void {
    try {
      listener(method, params);
    } catch (error) {
      this.#deps.report(
        new OneWorksError(ERROR_CODES.INTERNAL, `a listener for notification ${method} threw: ${messageOf(error)}`, { cause: error }),
      );
    }
  }

  // Builds and writes a response unless the connection closed meanwhile.
  #respond(id: RpcId, method: string, build: () => unknown, fallback = true): void {
    if (this.#deps.signal.aborted) {
      this.#deps.logger.debug('connection closed while handling a request; no response sent', { id, method });
      return;
    }
    let frame: unknown;
    try {
      frame = build();
    } catch (error) {
      this.#deps.report(
        new OneWorksError(ERROR_CODES.INTERNAL, `could not build the response to ${method}: ${messageOf(error)}`, { cause: error }),
      );
      return;
    }
    this.#deps.send(frame).catch((error: unknown) => {
      if (this.#deps.signal.aborted) return;
      const code = error instanceof OneWorksError ? error.code : ERROR_CODES.CONNECTION_CLOSED;
      this.#deps.report(
        new OneWorksError(code, `could not send the response to ${method} (request ${id}): ${messageOf(error)}`, { cause: error }),
      );
      // A result JSON cannot carry (a cycle, a BigInt) must still get an answer, or the peer waits forever.
      if (fallback && code === ERROR_CODES.INTERNAL) {
        const wire = ProtocolError.internalError(`the result of ${method} could not be serialised`).toWireError();
        this.#respond(id, method, () => this.#deps.envelope.errorResponse(id, wire), false);
      }
    });
  }
}

// The wire form of a handler failure: a ProtocolError as chosen, anything else as -32603 (no stack).
function toWireError(error: unknown): WireError {
  if (error instanceof ProtocolError) return error.toWireError();
  return { code: JSONRPC_ERROR_CODES.INTERNAL_ERROR, message: messageOf(error) };
}

function messageOf(error: unknown): string {
  if (error instanceof Error && error.message !== '') return error.message;
  return typeof error === 'string' && error !== '' ? error : 'internal error';
}
