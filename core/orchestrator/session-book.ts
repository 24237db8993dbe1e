import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { EventDraft, RuntimeEvent } from '../events/index.js';
import type { Redactor } from '../redact.js';
import type { SessionRecord, Store } from '../store/index.js';

/** A live listener of one session's events (deltas included). */
export type BookListener = (event: RuntimeEvent) => void;

/**
 * The orchestrator's authoritative copy of one session: its record and its event numbering.
 * Both the orchestrator (queued runs, cancellations, `turn.queued`) and the session's runner
 * (through `RunnerStore`) change the record here, and every change is persisted in call order.
 * Events from both sides share one `seq` counter; the log receives them in seq order.
 */
export class SessionBook {
  readonly #store: Store;
  readonly #redactor: Redactor;
  #record: SessionRecord;
  #writes: Promise<void> = Promise.resolve();
  // True while the latest record write failed: memory holds a change the disk does not.
  #unpersisted = false;
  #seq: number;
  #nextWrite: number;
  readonly #held = new Map<number, RuntimeEvent>();
  // Runner events already numbered at notification time, by key, until the runner appends them.
  readonly #runnerSeq = new Map<string, number>();
  #events: Promise<void> = Promise.resolve();
  #eventError: unknown;
  readonly #listeners = new Set<BookListener>();
  readonly #onChange: () => void;

  constructor(options: { store: Store; record: SessionRecord; lastSeq: number; redactor: Redactor; onChange: () => void }) {
    this.#store = options.store;
    this.#record = options.record;
    this.#redactor = options.redactor;
    this.#seq = options.lastSeq;
    this.#nextWrite = options.lastSeq + 1;
    this.#onChange = options.onChange;
  }

  get record(): SessionRecord {
    return this.#record;
  }

  get id(): string {
    return this.#record.id;
  }

  /**
   * Applies `change` now and persists the result after every earlier change (and after `after`,
   * when given: a write that must wait for something else to be durable); rejects when that
   * write fails or `after` rejects (then nothing is written).
   */
  update(change: (record: SessionRecord) => SessionRecord, after?: Promise<unknown>): Promise<void> {
    let changed: SessionRecord;
    try {
      changed = change(this.#record);
    } catch (error) {
      return Promise.reject(error);
    }
    const next = { ...changed, updatedAt: new Date().toISOString() };
    for (const [key, value] of Object.entries(next)) if (value === undefined) delete (next as Record<string, unknown>)[key];
    this.#record = next;
    const ready = after === undefined ? this.#writes : Promise.all([this.#writes, after]);
    const write = ready.then(() => this.#store.writeSession(next));
    this.#writes = write.then(
      () => {
        this.#unpersisted = false;
      },
      () => {
        this.#unpersisted = true;
      },
    );
    this.#onChange();
    return write;
  }

  /**
   * Drops a run from the record in memory only: for a queued run whose write failed, so that
   * memory matches what was persisted. The next write persists the record without it.
   */
  forgetRun(runId: string): void {
    this.#record = { ...this.#record, runs: this.#record.runs.filter((run) => run.id !== runId) };
    this.#onChange();
  }

  /**
   * What a runner opened for the run at index `base` sees: every run before it, and that run's
   * settings as `pending`. The runner then appends run `r${base + 1}`, which is the queued run
   * it is about to execute.
   */
  runnerView(base: number): SessionRecord {
    const next = this.#record.runs[base];
    // The settings the run was accepted with are the runner's pending ones: an undefined
    // effort stays undefined instead of falling back to the previous run's.
    const pending = next ? { model: next.model, effort: next.effort, autonomy: next.autonomy } : this.#record.pending;
    return { ...this.#record, runs: this.#record.runs.slice(0, base), ...(pending ? { pending } : {}) };
  }

  /**
   * A record written by the runner: its runs replace the prefix they cover; later runs stay.
   * Metadata the orchestrator owns (title, labels, archived) stays as it is here: the runner's
   * copy may predate an `updateSession`.
   */
  mergeFromRunner(written: SessionRecord): Promise<void> {
    return this.update((current) => {
      const ownRuns = written.runs;
      const mine = current.runs[ownRuns.length - 1];
      const theirs = ownRuns.at(-1);
      if (theirs && mine && mine.id !== theirs.id) {
        throw new OneWorksError(
          ERROR_CODES.INTERNAL,
          `session ${current.id}: the runner wrote run ${theirs.id} where run ${mine.id} is recorded`,
        );
      }
      const { title, labels, archived } = current;
      return { ...written, title, labels, archived, runs: [...ownRuns, ...current.runs.slice(ownRuns.length)] };
    });
  }

  subscribe(listener: BookListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records an event of the orchestrator itself (redacted, numbered, logged, notified). */
  emit(draft: EventDraft): void {
    const event = {
      ...this.#redactor.redactValue(draft),
      sessionId: this.id,
      seq: ++this.#seq,
      at: new Date().toISOString(),
    } as RuntimeEvent;
    this.#hold(event);
    this.#notify(event);
  }

  /** A runner's live event: renumbered into this book's sequence and passed to listeners. */
  forward(event: RuntimeEvent): void {
    if (event.type === 'assistant.delta') {
      this.#notify({ ...event, seq: this.#seq });
      return;
    }
    const seq = ++this.#seq;
    this.#runnerSeq.set(event.key, seq);
    this.#notify({ ...event, seq });
  }

  /** A runner's append: each event gets the number it was forwarded with; resolves once logged. */
  appendFromRunner(events: readonly RuntimeEvent[]): Promise<void> {
    let last = 0;
    for (const event of events) {
      const seq = this.#runnerSeq.get(event.key) ?? ++this.#seq;
      this.#runnerSeq.delete(event.key);
      this.#hold({ ...event, seq });
      last = Math.max(last, seq);
    }
    return this.#loggedThrough(last);
  }

  /**
   * Resolves when every record change and every numbered event so far is persisted. When the
   * latest record write had failed (a full disk, say), the current record is written once more
   * first, so that an outcome known in memory is not lost on a graceful stop; rejects if that
   * write fails again.
   */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#unpersisted) {
      const record = this.#record;
      const retry = this.#store.writeSession(record);
      this.#writes = retry.then(
        () => {
          if (this.#record === record) this.#unpersisted = false;
        },
        () => undefined,
      );
      await retry;
    }
    await this.#loggedThrough(this.#seq);
  }

  #notify(event: RuntimeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the session goes on.
      }
    }
  }

  // Events reach the log in seq order: an event waits until every lower number has arrived.
  #hold(event: RuntimeEvent): void {
    this.#held.set(event.seq, event);
    const batch: RuntimeEvent[] = [];
    while (this.#held.has(this.#nextWrite)) {
      batch.push(this.#held.get(this.#nextWrite)!);
      this.#held.delete(this.#nextWrite++);
    }
    if (batch.length === 0) return;
    // After the record writes so far: a new session's directory exists before its first event.
    const records = this.#writes;
    this.#events = this.#events
      .then(() => records)
      .then(() => this.#store.appendEvents(this.id, batch))
      .catch((error: unknown) => {
        this.#eventError ??= error;
      });
  }

  async #loggedThrough(seq: number): Promise<void> {
    // Every event up to `seq` is either in a batch already chained or still held for a gap.
    for (;;) {
      const chained = this.#events;
      await chained;
      if (this.#eventError !== undefined) throw this.#eventError;
      if (this.#nextWrite > seq || chained === this.#events) return;
    }
  }
}
