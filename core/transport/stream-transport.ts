import type { Readable, Writable } from 'node:stream';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { Inbox } from './inbox.js';
import { NdjsonCodec, serializeMessage } from './ndjson-codec.js';
import type { Transport } from './transport.js';

export interface StreamTransportOptions {
  /** Cap on one inbound line in bytes; longer lines are reported through `onerror` and skipped. */
  maxLineBytes?: number;
}

/**
 * A {@link Transport} speaking NDJSON over a pair of Node streams (typically a child's stdout and
 * stdin). Handlers must not throw: they run inside stream events.
 *
 * - Reading starts at `start()`. Each malformed or oversized line reaches `onerror` as
 *   PROTOCOL_ERROR with `data: { line, reason }` (the line truncated); later lines still flow.
 * - `send()` writes one line at a time and resolves once the stream accepted it, waiting for
 *   `drain` under backpressure. It rejects with CONNECTION_CLOSED after `close()`, or when the
 *   writable is ended, destroyed or fails (EPIPE is reported, never thrown).
 * - `onclose` fires once: when the readable ends or closes, or when `close()` is called.
 * - `close()` stops reading and ends the writable. It destroys neither stream and never touches
 *   the process that owns them.
 */
export function createStreamTransport(readable: Readable, writable: Writable, options: StreamTransportOptions = {}): Transport {
  return new StreamTransport(readable, writable, options);
}

class StreamTransport implements Transport {
  onerror?: (error: OneWorksError) => void;
  onclose?: () => void;
  readonly #readable: Readable;
  readonly #writable: Writable;
  readonly #codec: NdjsonCodec;
  readonly #inbox = new Inbox();
  #started = false;
  #closed = false;
  #writeFailure: unknown;
  #writeChain: Promise<void> = Promise.resolve();
  // Rejecters of sends waiting for 'drain', settled early when the transport closes.
  readonly #waiting = new Set<(error: OneWorksError) => void>();

  constructor(readable: Readable, writable: Writable, options: StreamTransportOptions) {
    this.#readable = readable;
    this.#writable = writable;
    this.#codec = new NdjsonCodec(options);
    // Attached at once so an EPIPE on the child's stdin can never become an uncaught error.
    writable.on('error', this.#onWriteError);
  }

  get onmessage(): ((message: unknown) => void) | undefined {
    return this.#inbox.handler;
  }

  set onmessage(handler: ((message: unknown) => void) | undefined) {
    this.#inbox.handler = handler;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    if (this.#closed) throw closedError('cannot start a closed transport');
    this.#started = true;
    const readable = this.#readable;
    readable.on('data', this.#onData);
    readable.on('end', this.#onEnd);
    readable.on('close', this.#onEnd);
    readable.on('error', this.#onReadError);
    if (readable.readableEnded || readable.destroyed) queueMicrotask(this.#onEnd);
  }

  send(message: unknown): Promise<void> {
    if (this.#closed) return Promise.reject(closedError('cannot send: the transport is closed'));
    let line: string;
    try {
      line = serializeMessage(message);
    } catch (error) {
      return Promise.reject(error);
    }
    // Serialise writes: each waits for the previous one, whatever its outcome.
    const write = this.#writeChain.then(() => this.#write(line));
    this.#writeChain = write.catch(() => undefined);
    return write;
  }

  async close(): Promise<void> {
    // Also after EOF: the input ending does not end the output; close() does.
    if (!this.#closed) this.#finish();
    const writable = this.#writable;
    if (!writable.destroyed && !writable.writableEnded) writable.end();
  }

  // Writes one line, waiting for 'drain' when the stream signals backpressure.
  #write(line: string): Promise<void> {
    const writable = this.#writable;
    if (this.#closed) return Promise.reject(closedError('cannot send: the transport is closed'));
    if (this.#writeFailure !== undefined || writable.destroyed || writable.writableEnded) {
      return Promise.reject(closedError('cannot send: the output stream is closed', this.#writeFailure));
    }
    if (writable.write(line)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: OneWorksError): void => {
        writable.off('drain', onDrain);
        writable.off('close', onClose);
        this.#waiting.delete(settle);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = (): void => settle();
      const onClose = (): void => settle(closedError('the output stream closed before the write drained', this.#writeFailure));
      writable.on('drain', onDrain);
      writable.on('close', onClose);
      this.#waiting.add(settle);
    });
  }

  readonly #onData = (chunk: Buffer | string): void => {
    if (this.#closed) return;
    this.#codec.append(chunk);
    this.#drainCodec();
  };

  readonly #onEnd = (): void => {
    if (this.#closed) return;
    this.#codec.end();
    this.#drainCodec();
    this.#finish();
  };

  readonly #onReadError = (error: Error): void => {
    if (this.#closed) return;
    this.onerror?.(new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `input stream failed: ${error.message}`, { cause: error }));
  };

  readonly #onWriteError = (error: Error): void => {
    this.#writeFailure ??= error;
    for (const settle of [...this.#waiting]) settle(closedError(`output stream failed: ${error.message}`, error));
    if (this.#closed) return;
    this.onerror?.(new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `output stream failed: ${error.message}`, { cause: error }));
  };

  // Hands every complete line to the handlers.
  #drainCodec(): void {
    for (let result = this.#codec.next(); result !== undefined; result = this.#codec.next()) {
      if (result.kind === 'message') {
        this.#inbox.deliver(result.value);
      } else {
        const { line, reason } = result;
        this.onerror?.(new OneWorksError(ERROR_CODES.PROTOCOL_ERROR, `malformed inbound line: ${reason}`, { data: { line, reason } }));
      }
      if (this.#closed) return;
    }
  }

  // Stops reading, settles waiting writes and reports the close once.
  #finish(): void {
    this.#closed = true;
    const readable = this.#readable;
    readable.off('data', this.#onData);
    readable.off('end', this.#onEnd);
    readable.off('close', this.#onEnd);
    readable.off('error', this.#onReadError);
    // Keep a listener so a late stream error is not thrown as uncaught. The readable is left
    // flowing (data is dropped), so a child writing to a full pipe is never blocked by us.
    readable.on('error', ignoreLateError);
    this.#codec.clear();
    for (const settle of [...this.#waiting]) settle(closedError('the transport closed before the write drained'));
    this.onclose?.();
  }
}

// Listens for errors raised after the transport closed, which nobody is left to act on.
function ignoreLateError(): void {}

function closedError(message: string, cause?: unknown): OneWorksError {
  return new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, message, cause === undefined ? {} : { cause });
}
