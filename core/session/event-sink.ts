import type { EventDraft, RuntimeEvent } from '../events/index.js';
import type { Redactor, StreamRedactor } from '../redact.js';

/** Where stamped events go: the durable log (deltas excluded) and live listeners. */
export interface EventSinkTarget {
  /** Appends recorded events durably, in order. */
  append(events: RuntimeEvent[]): Promise<void>;
}

export type EventListener = (event: RuntimeEvent) => void;

/**
 * Stamps adapter drafts into RuntimeEvents: redacts every string, drops drafts whose key was
 * already recorded (across processes too: `seenKeys` is loaded from the event log), assigns
 * `seq` and `at`, appends all but live-only deltas to the log in order, and notifies listeners.
 * Appends are chained so the log order equals the emit order; `flush()` waits for them.
 */
export class EventSink {
  readonly #sessionId: string;
  readonly #target: EventSinkTarget;
  readonly #redactor: Redactor;
  readonly #seen: Set<string>;
  readonly #listeners = new Set<EventListener>();
  // Live deltas pass through a streaming redactor per message, so a secret split across
  // deltas is caught; the held-back tail is released before the committed message.
  readonly #deltaStreams = new Map<string, StreamRedactor>();
  #seq: number;
  #writes: Promise<void> = Promise.resolve();
  /** Events recorded but not yet handed to the target (the next write takes them all). */
  #batch: RuntimeEvent[] = [];
  #writeError: unknown;
  // The last `at` stamp and the millisecond it stands for: a burst within one millisecond formats it once.
  #atMs = -1;
  #at = '';

  constructor(options: {
    sessionId: string;
    target: EventSinkTarget;
    redactor: Redactor;
    seenKeys: Iterable<string>;
    lastSeq: number;
  }) {
    this.#sessionId = options.sessionId;
    this.#target = options.target;
    this.#redactor = options.redactor;
    this.#seen = new Set(options.seenKeys);
    this.#seq = options.lastSeq;
  }

  /** Subscribes to stamped events (deltas included); returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records one draft. Returns the stamped event, or undefined when its key was seen before. */
  emit(draft: EventDraft): RuntimeEvent | undefined {
    if (draft.type === 'assistant.delta') return this.#emitDelta(draft);
    if (draft.type === 'assistant.message') this.#releaseDelta(draft.messageId);
    return this.#record(draft);
  }

  #emitDelta(draft: Extract<EventDraft, { type: 'assistant.delta' }>): RuntimeEvent | undefined {
    const streamKey = `${draft.messageId}:${draft.thinking === true}`;
    let stream = this.#deltaStreams.get(streamKey);
    if (!stream) {
      stream = this.#redactor.stream();
      this.#deltaStreams.set(streamKey, stream);
    }
    const text = stream.push(draft.text);
    return text ? this.#record({ ...draft, text }, true) : undefined;
  }

  #releaseDelta(messageId: string): void {
    for (const thinking of [true, false]) {
      const streamKey = `${messageId}:${thinking}`;
      const text = this.#deltaStreams.get(streamKey)?.flush();
      this.#deltaStreams.delete(streamKey);
      if (text) this.#record({ type: 'assistant.delta', key: `${streamKey}:tail`, messageId, text, thinking }, true);
    }
  }

  #record(draft: EventDraft, redacted = false): RuntimeEvent | undefined {
    const live = draft.type === 'assistant.delta';
    if (!live) {
      if (this.#seen.has(draft.key)) return undefined;
      this.#seen.add(draft.key);
    }
    const event = {
      ...(redacted ? draft : this.#redactor.redactValue(draft)),
      sessionId: this.#sessionId,
      seq: live ? this.#seq : ++this.#seq,
      at: this.#now(),
    } as RuntimeEvent;
    if (!live) {
      // Group commit: events recorded while a write is in flight go out together in the next
      // one (one append call per batch, in seq order), so a burst costs a few writes, not one each.
      this.#batch.push(event);
      if (this.#batch.length === 1) {
        this.#writes = this.#writes
          .then(() => {
            const batch = this.#batch;
            this.#batch = [];
            return this.#target.append(batch);
          })
          .catch((error: unknown) => {
            this.#writeError ??= error;
          });
      }
    }
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  #now(): string {
    const ms = Date.now();
    if (ms !== this.#atMs) {
      this.#atMs = ms;
      this.#at = new Date(ms).toISOString();
    }
    return this.#at;
  }

  /** True when a draft with this key has been recorded. */
  has(key: string): boolean {
    return this.#seen.has(key);
  }

  /** Waits for every pending append; rethrows the first append failure. */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#writeError !== undefined) throw this.#writeError;
  }
}
