import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RpcId } from './types.js';

// setTimeout fires at once for delays above this (2^31 - 1 ms); longer deadlines mean "none".
const MAX_TIMER_MS = 2_147_483_647;

/** How one outbound request waits for its response. */
export interface PendingOptions {
  method: string;
  /** Deadline in milliseconds; `Infinity` (or anything above ~24.8 days) means no deadline. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called once when the request is given up locally (deadline or abort), after it was rejected. */
  onAbandon?: (why: 'timeout' | 'cancel') => void;
}

interface Entry {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  // Clears the timer and the abort listener.
  dispose(): void;
}

/**
 * The table of outbound requests waiting for a response, keyed by id (its type included: `1` and `"1"` are different entries). Owns each request's
 * deadline timer and abort listener; an entry leaves the table the moment it settles, so a second
 * response for the same id finds nothing (`resolve`/`reject` return false).
 */
export class PendingRequests {
  readonly #entries = new Map<RpcId, Entry>();

  /** Number of requests still waiting. */
  get size(): number {
    return this.#entries.size;
  }

  /** True while the request `id` waits for its response. */
  has(id: RpcId): boolean {
    return this.#entries.has(id);
  }

  /** The method of a waiting request. */
  methodOf(id: RpcId): string | undefined {
    return this.#entries.get(id)?.method;
  }

  /**
   * Registers request `id` and returns the promise of its result. It rejects with
   * REQUEST_TIMEOUT after `timeoutMs`, with REQUEST_CANCELLED when `signal` aborts (at once if it
   * already has, in which case nothing is registered), or with whatever `reject` is given.
   */
  add(id: RpcId, options: PendingOptions): Promise<unknown> {
    const { method, timeoutMs, signal, onAbandon } = options;
    if (this.#entries.has(id)) {
      return Promise.reject(new OneWorksError(ERROR_CODES.INTERNAL, `request id ${id} is already pending`));
    }
    if (!(timeoutMs >= 0)) {
      return Promise.reject(new OneWorksError(ERROR_CODES.INTERNAL, `timeoutMs must be >= 0, got ${timeoutMs}`));
    }
    if (signal?.aborted) return Promise.reject(cancelledError(method, id, signal));

    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const abandon = (why: 'timeout' | 'cancel', error: OneWorksError): void => {
        if (this.reject(id, error)) onAbandon?.(why);
      };
      const onAbort = (): void => abandon('cancel', cancelledError(method, id, signal));
      if (timeoutMs <= MAX_TIMER_MS) {
        timer = setTimeout(() => abandon('timeout', timeoutError(method, id, timeoutMs)), timeoutMs);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#entries.set(id, {
        method,
        resolve,
        reject,
        dispose: () => {
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      });
    });
  }

  /** Settles request `id` with `result`. False when no such request is waiting. */
  resolve(id: RpcId, result: unknown): boolean {
    const entry = this.#take(id);
    entry?.resolve(result);
    return entry !== undefined;
  }

  /** Rejects request `id` with `error`. False when no such request is waiting. */
  reject(id: RpcId, error: Error): boolean {
    const entry = this.#take(id);
    entry?.reject(error);
    return entry !== undefined;
  }

  /** Rejects every waiting request with the error `makeError` builds for it, emptying the table. */
  rejectAll(makeError: (id: RpcId, method: string) => Error): void {
    for (const [id, entry] of [...this.#entries]) this.reject(id, makeError(id, entry.method));
  }

  // Removes an entry before settling it, so that a settle can never run twice.
  #take(id: RpcId): Entry | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    this.#entries.delete(id);
    entry.dispose();
    return entry;
  }
}

function timeoutError(method: string, id: RpcId, timeoutMs: number): OneWorksError {
  return new OneWorksError(ERROR_CODES.REQUEST_TIMEOUT, `${method} got no response within ${timeoutMs} ms (request ${id})`, {
    data: { method, id, timeoutMs },
  });
}

function cancelledError(method: string, id: RpcId, signal: AbortSignal | undefined): OneWorksError {
  return new OneWorksError(ERROR_CODES.REQUEST_CANCELLED, `${method} was cancelled before its response arrived (request ${id})`, {
    data: { method, id },
    cause: signal?.reason,
  });
}
