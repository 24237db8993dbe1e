import { ERROR_CODES, OneWorksError } from '../errors.js';
import { Inbox } from './inbox.js';
import { serializeMessage } from './ndjson-codec.js';
import type { Transport } from './transport.js';

/**
 * Two transports joined back to back, for tests. What one side sends, the other receives,
 * asynchronously and in order, after a JSON round trip, so tests see exactly what a wire would
 * carry (no shared references, `undefined` members dropped). Messages wait until the receiver
 * has been started.
 *
 * `close()` on either side ends both: the closing side's `onclose` fires at once, the other
 * side's after it has received everything sent before the close (like EOF on a pipe).
 */
export function createLinkedPair(): [Transport, Transport] {
  const left = new InMemoryTransport();
  const right = new InMemoryTransport();
  left.peer = right;
  right.peer = left;
  return [left, right];
}

// One queued inbound event: a message, or the peer's end of stream.
type Arrival = { kind: 'message'; message: unknown } | { kind: 'end' };

class InMemoryTransport implements Transport {
  onerror?: (error: OneWorksError) => void;
  onclose?: () => void;
  peer: InMemoryTransport | undefined;
  readonly #inbox = new Inbox();
  #arrivals: Arrival[] = [];
  #started = false;
  #closed = false;
  #flushScheduled = false;

  get onmessage(): ((message: unknown) => void) | undefined {
    return this.#inbox.handler;
  }

  set onmessage(handler: ((message: unknown) => void) | undefined) {
    this.#inbox.handler = handler;
  }

  async start(): Promise<void> {
    if (this.#closed) throw new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'cannot start a closed transport');
    this.#started = true;
    this.#scheduleFlush();
  }

  async send(message: unknown): Promise<void> {
    if (this.#closed) throw new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'cannot send: the transport is closed');
    const copy: unknown = JSON.parse(serializeMessage(message));
    this.peer?.receive({ kind: 'message', message: copy });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#arrivals = [];
    this.peer?.receive({ kind: 'end' });
    this.onclose?.();
  }

  /** Called by the peer: queues one arrival for delivery on a later microtask. */
  receive(arrival: Arrival): void {
    if (this.#closed) return;
    this.#arrivals.push(arrival);
    this.#scheduleFlush();
  }

  // Delivery is deferred so that a send never re-enters the receiver's handlers synchronously.
  #scheduleFlush(): void {
    if (this.#flushScheduled || !this.#started) return;
    this.#flushScheduled = true;
    queueMicrotask(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (!this.#closed) {
      const arrival = this.#arrivals.shift();
      if (arrival === undefined) return;
      if (arrival.kind === 'message') {
        this.#inbox.deliver(arrival.message);
      } else {
        this.#closed = true;
        this.onclose?.();
      }
    }
  }
}
