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
  // Live deltas pass through a streaming redactor per message (text and thinking apart, by
  // message id), so a secret split across deltas is caught; the held-back tail is released
  // before the committed message.
  readonly #textStreams = new Map<string, StreamRedactor>();
  readonly #thinkingStreams = new Map<string, StreamRedactor>();
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
    const streams = draft.thinking === true ? this.#thinkingStreams : this.#textStreams;
    let stream = streams.get(draft.messageId);
    if (!stream) {
      stream = this.#redactor.stream();
      streams.set(draft.messageId, stream);
    }
    const text = stream.push(draft.text);
    return text ? this.#recordDelta(draft, text) : undefined;
  }

  // A live delta (already redacted by its stream): stamped, handed to listeners, never written.
  #recordDelta(draft: Extract<EventDraft, { type: 'assistant.delta' }>, text: string): RuntimeEvent {
    const event = this.#stamp(draft, this.#seq);
    (event as { text: string }).text = text;
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  // The event of a draft: a copy with `sessionId`, `seq` and `at` added after the draft's own
  // fields. Object.assign, then plain stores: V8 (Node 20) builds `{ ...draft, more }` on a slow
  // path, tens of times slower than this.
  #stamp<D extends EventDraft>(draft: D, seq: number): D & { sessionId: string; seq: number; at: string } {
    const event = Object.assign({}, draft) as D & { sessionId: string; seq: number; at: string };
    event.sessionId = this.#sessionId;
    event.seq = seq;
    event.at = this.#now();
    return event;
  }

  #releaseDelta(messageId: string): void {
    for (const thinking of [true, false]) {
      const streams = thinking ? this.#thinkingStreams : this.#textStreams;
      const text = streams.get(messageId)?.flush();
      streams.delete(messageId);
      if (text) this.#recordDelta({ type: 'assistant.delta', key: `${messageId}:${thinking}:tail`, messageId, text, thinking }, text);
    }
  }

  // A recorded (not live) event: redacted, deduplicated by key, numbered, written and handed to listeners.
  #record(draft: Exclude<EventDraft, { type: 'assistant.delta' }>): RuntimeEvent | undefined {
    if (this.#seen.has(draft.key)) return undefined;
    this.#seen.add(draft.key);
    const event = this.#stamp(this.#redactor.redactValue(draft), ++this.#seq) as RuntimeEvent;
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
