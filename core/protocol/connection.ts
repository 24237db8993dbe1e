import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { Transport } from '../transport/transport.js';
import { closedError, invalidMessageError, peerError, pendingClosedError, sendError, unexpectedResponseError } from './failures.js';
import { InboundDispatcher, type NotificationListener, type RequestHandler } from './dispatch.js';
import { NULL_LOGGER, type ProtocolLogger } from './logger.js';
import { PendingRequests } from './pending-requests.js';
import { assertParams, parseResult } from './validate.js';
import type { ConnectionState, Envelope, Inbound, RequestDescriptor, RequestOptions, RpcId } from './types.js';

/** Deadline of a request that names none, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface ConnectionOptions {
  /** Deadline of requests that name none. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  defaultTimeoutMs?: number;
  /** Prefix of outbound string request ids (`${idPrefix}${n}`, n from 1). Default ''. Not allowed with `idType: 'number'`. */
  idPrefix?: string;
  /**
   * Type of outbound request ids: `'string'` (default; `${idPrefix}${n}`) or `'number'` (n, from 1),
   * for peers that only take numeric ids. Inbound ids of either type are accepted whatever this says.
   */
  idType?: 'string' | 'number';
  logger?: ProtocolLogger;
}

/**
 * A JSON-RPC-style connection over a {@link Transport}, in a CLI's {@link Envelope}. States go
 * `new → open → closing → closed`. Closing (by `close()` or because the transport closed)
 * rejects every pending request with CONNECTION_CLOSED, aborts `signal` (and so every in-flight
 * handler's `ctx.signal`), closes the transport and settles `closed`. Calls after that reject
 * with CONNECTION_CLOSED. The connection never stops the process behind the transport.
 */
export interface Connection {
  readonly state: ConnectionState;
  /** Settles once closed, with the reason given to `close()` (or the transport's end), if any. Never rejects. */
  readonly closed: Promise<OneWorksError | undefined>;
  /** Aborted when the connection starts closing; its reason is the close reason. */
  readonly signal: AbortSignal;
  /** Starts the transport (state `open`). Idempotent; rejects with CONNECTION_CLOSED once closing. */
  start(): Promise<void>;
  /**
   * Sends a request and resolves with its result parsed by `descriptor.result`. Rejects with
   * INTERNAL when `params` fail `descriptor.params` (nothing is sent), PROTOCOL_ERROR when the
   * result does not parse, PEER_ERROR (`data: { method, code, message, data }`) when the peer
   * answers with an error, REQUEST_TIMEOUT after `timeoutMs`, REQUEST_CANCELLED when `signal`
   * aborts, CONNECTION_CLOSED when the connection closes first.
   */
  request<P, R>(descriptor: RequestDescriptor<P, R>, params: P, options?: RequestOptions): Promise<R>;
  /** Like `request` without schemas: resolves with the raw result. */
  requestRaw(method: string, params: unknown, options?: RequestOptions): Promise<unknown>;
  /** Sends a notification; resolves once the transport accepted it. */
  notify(method: string, params: unknown): Promise<void>;
  /** Sets the handler of inbound requests for `method` (replacing any). Unhandled methods get -32601. */
  onRequest(method: string, handler: RequestHandler): () => void;
  /** Adds a listener for inbound notifications. */
  onNotification(listener: NotificationListener): () => void;
  /** Adds a tap that sees every raw inbound message before it is classified and dispatched. */
  onInbound(tap: (message: unknown) => void): () => void;
  /** Adds a listener for problems: malformed frames, invalid messages, unexpected responses, failed listeners. */
  onProblem(listener: (problem: OneWorksError) => void): () => void;
  /** Closes the connection (see above). Idempotent; never rejects. */
  close(reason?: OneWorksError): Promise<void>;
}

/** Creates a connection over `transport`, speaking `envelope`. Nothing is read until `start()`. */
export function createConnection(transport: Transport, envelope: Envelope, options: ConnectionOptions = {}): Connection {
  return new ProtocolConnection(transport, envelope, options);
}

class ProtocolConnection implements Connection {
  readonly closed: Promise<OneWorksError | undefined>;
  readonly #transport: Transport;
  readonly #envelope: Envelope;
  readonly #logger: ProtocolLogger;
  readonly #defaultTimeoutMs: number;
  readonly #idPrefix: string;
  readonly #numericIds: boolean;
  readonly #abort = new AbortController();
  readonly #pending = new PendingRequests();
  readonly #dispatcher: InboundDispatcher;
  readonly #taps = new Set<(message: unknown) => void>();
  readonly #problemListeners = new Set<(problem: OneWorksError) => void>();
  #state: ConnectionState = 'new';
  #nextId = 0;
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #resolveClosed!: (reason: OneWorksError | undefined) => void;

  constructor(transport: Transport, envelope: Envelope, options: ConnectionOptions) {
    this.#transport = transport;
    this.#envelope = envelope;
    this.#logger = options.logger ?? NULL_LOGGER;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#idPrefix = options.idPrefix ?? '';
    this.#numericIds = options.idType === 'number';
    if (this.#numericIds && this.#idPrefix !== '') {
      throw new OneWorksError(ERROR_CODES.INTERNAL, 'a connection with numeric ids cannot have an idPrefix');
    }
    this.closed = new Promise((resolve) => {
      this.#resolveClosed = resolve;
    });
    this.#dispatcher = new InboundDispatcher({
      envelope,
      signal: this.#abort.signal,
      send: (message) => this.#transport.send(message),
      report: (problem) => this.#report(problem),
      logger: this.#logger,
    });
    transport.onmessage = (message) => this.#receive(message);
    transport.onerror = (error) => this.#report(error);
    transport.onclose = () => {
      void this.close(new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'the peer closed the connection (end of stream)'));
    };
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  start(): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(closedError('cannot start a closed connection'));
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async request<P, R>(descriptor: RequestDescriptor<P, R>, params: P, options: RequestOptions = {}): Promise<R> {
    const checked = assertParams(descriptor, params);
    const raw = await this.requestRaw(descriptor.method, checked, options);
    return parseResult(descriptor, raw);
  }

  async requestRaw(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    this.#assertUsable(method);
    this.#nextId += 1;
    const id: RpcId = this.#numericIds ? this.#nextId : `${this.#idPrefix}${this.#nextId}`;
    const frame = this.#envelope.request(id, method, params);
    const response = this.#pending.add(id, {
      method,
      timeoutMs: options.timeoutMs ?? this.#defaultTimeoutMs,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      onAbandon: () => this.#sendCancel(id, method),
    });
    // Registered before sending, so that even an immediate response finds its entry.
    if (this.#pending.has(id)) {
      this.#transport.send(frame).catch((error: unknown) => this.#pending.reject(id, sendError(method, error)));
    }
    return response;
  }

  async notify(method: string, params: unknown): Promise<void> {
    this.#assertUsable(method);
    const frame = this.#envelope.notification(method, params);
    await this.#transport.send(frame).catch((error: unknown) => {
      throw sendError(method, error);
    });
  }

  onRequest(method: string, handler: RequestHandler): () => void {
    return this.#dispatcher.setHandler(method, handler);
  }

  onNotification(listener: NotificationListener): () => void {
    return this.#dispatcher.addListener(listener);
  }

  onInbound(tap: (message: unknown) => void): () => void {
    this.#taps.add(tap);
    return () => this.#taps.delete(tap);
  }

  onProblem(listener: (problem: OneWorksError) => void): () => void {
    this.#problemListeners.add(listener);
    return () => this.#problemListeners.delete(listener);
  }

  close(reason?: OneWorksError): Promise<void> {
    // Assigned before teardown starts: closing the transport calls back into close() synchronously.
    if (this.#closing === undefined) {
      this.#closing = this.closed.then(() => undefined);
      this.#close(reason).catch((error: unknown) => this.#logger.debug('connection teardown failed', { error: String(error) }));
    }
    return this.#closing;
  }

  async #start(): Promise<void> {
    this.#state = 'open';
    try {
      await this.#transport.start();
    } catch (error) {
      const reason = closedError(`the transport failed to start: ${String(error)}`, error);
      await this.close(reason);
      throw reason;
    }
  }

  // Teardown in steps; each runs even if an earlier one throws, and `closed` always settles.
  async #close(reason: OneWorksError | undefined): Promise<void> {
    this.#state = 'closing';
    this.#logger.debug('connection closing', { reason: reason?.message, pending: this.#pending.size });
    try {
      try {
        this.#abort.abort(reason ?? closedError('the connection was closed'));
      } finally {
        this.#pending.rejectAll((id, method) => pendingClosedError(id, method, reason));
      }
      await this.#transport.close().catch((error: unknown) => {
        this.#logger.debug('transport close failed', { error: String(error) });
      });
    } finally {
      this.#state = 'closed';
      this.#resolveClosed(reason);
    }
  }

  // One inbound message: taps first, then classification and routing.
  #receive(message: unknown): void {
    if (this.#state !== 'open') {
      this.#logger.debug('inbound message after close dropped', { state: this.#state });
      return;
    }
    if (this.#taps.size > 0) {
      for (const tap of [...this.#taps]) {
        try {
          tap(message);
        } catch (error) {
          this.#report(new OneWorksError(ERROR_CODES.INTERNAL, `an inbound tap threw: ${String(error)}`, { cause: error }));
        }
      }
      // A tap may have closed the connection (a version mismatch on the first frame).
      if (this.#state !== 'open') return;
    }
    this.#route(this.#classify(message), message);
  }

  #classify(message: unknown): Inbound {
    try {
      return this.#envelope.classify(message);
    } catch (error) {
      return { kind: 'invalid', reason: `the envelope could not classify it: ${String(error)}` };
    }
  }

  #route(inbound: Inbound, message: unknown): void {
    switch (inbound.kind) {
      case 'request':
        this.#dispatcher.dispatchRequest(inbound.id, inbound.method, inbound.params);
        return;
      case 'notification':
        this.#dispatcher.dispatchNotification(inbound.method, inbound.params);
        return;
      case 'response':
        if (!this.#pending.resolve(inbound.id, inbound.result)) this.#unexpected(inbound.id, message);
        return;
      case 'error': {
        const { id, error } = inbound;
        if (id === null) {
          this.#report(peerError(undefined, error));
        } else {
          const method = this.#pending.methodOf(id);
          if (method === undefined || !this.#pending.reject(id, peerError(method, error))) this.#unexpected(id, message);
        }
        return;
      }
      case 'invalid':
        this.#report(invalidMessageError(inbound.reason, message));
        return;
    }
  }

  // A response for an id nobody waits for: unknown, already settled (droid 0.225 can answer a
  // request twice, e.g. `{}` then an error), or late after a deadline. Reported and ignored.
  #unexpected(id: RpcId, message: unknown): void {
    this.#report(unexpectedResponseError(id, message));
  }

  #report(problem: OneWorksError): void {
    this.#logger.debug('protocol problem', { code: problem.code, message: problem.message });
    for (const listener of [...this.#problemListeners]) {
      try {
        listener(problem);
      } catch (error) {
        this.#logger.debug('a problem listener threw', { error: String(error) });
      }
    }
  }

  // Tells the peer about an abandoned request, when its wire has a message for that.
  #sendCancel(id: RpcId, method: string): void {
    if (this.#state !== 'open' || this.#envelope.cancelRequest === undefined) return;
    const frame = this.#envelope.cancelRequest(id, method);
    if (frame === undefined) return;
    this.#transport.send(frame).catch((error: unknown) => {
      this.#logger.debug('could not send a cancel', { id, method, error: String(error) });
    });
  }

  #assertUsable(method: string): void {
    if (this.#state === 'closing' || this.#state === 'closed') {
      throw closedError(`cannot send ${method}: the connection is closed`);
    }
  }
}
