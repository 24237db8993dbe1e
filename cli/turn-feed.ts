import { setTimeout as sleep } from 'node:timers/promises';
import type { RuntimeEvent } from '../core/events/index.js';

/** How often (and how long apart) a gap is looked up in the event log before it is skipped. */
const GAP_READS = 10;
const GAP_READ_DELAY_MS = 50;

export interface TurnFeedOptions {
  /** Receives the turn's events once each, in `seq` order (deltas where they arrived). */
  render: (event: RuntimeEvent) => void;
  /** The session's persisted event log (to fill what was emitted before the subscription). */
  readLog: () => Promise<RuntimeEvent[]>;
}

/**
 * The live view of ONE turn of a session, assembled from the orchestrator's live events and the
 * persisted log. A client subscribes only after its turn was accepted, so the first events may
 * have been sent before it listened: a gap in `seq` is filled from the log (events are logged
 * in seq order, shortly after they are sent). Rendering starts at the turn's `turn.queued`
 * (`turn:<runId>:queued`) and ends with the `session.closed` after its `turn.completed` (or
 * before the session's next turn); other turns' events are not shown. Deltas are live only.
 *
 * Feed live events with `push` from the moment of subscribing; call `start(runId)` once the
 * run id is known (events are held until then) and `finish()` once the run is terminal (when the
 * run's completion did not come live, it fills what the log has and the live stream did not
 * deliver). Never throws from `push`.
 */
export class TurnFeed {
  readonly #options: TurnFeedOptions;
  readonly #queue: RuntimeEvent[] = [];
  #runId: string | undefined;
  /** The seq of the last event handled; -1 until the turn's first event was found. */
  #last = -1;
  #completed = false;
  #ended = false;
  #behind = false;
  #draining: Promise<void> = Promise.resolve();

  constructor(options: TurnFeedOptions) {
    this.#options = options;
  }

  /** A live event from the subscription. */
  push(event: RuntimeEvent): void {
    this.#queue.push(event);
    if (this.#runId !== undefined) this.#drain();
  }

  /**
   * The run whose events to show; held events are handled now. `fromSeq`: the seq of the
   * turn's first event when known (1 for a new session's first turn), so that events sent
   * before the subscription are taken from the log; without it, showing starts at the turn's
   * `turn.queued` as it arrives live (subscribe before submitting). `queued`: the turn was
   * accepted as queued, so the session's previous turn may still be live; its events, up to the
   * `session.started` or `turn.started` that belongs to this turn, are not shown.
   */
  start(runId: string, fromSeq?: number, options: { queued?: boolean } = {}): void {
    this.#runId = runId;
    this.#behind = options.queued === true;
    if (fromSeq !== undefined) this.#last = fromSeq - 1;
    this.#drain();
  }

  /**
   * Handles everything queued, then, unless the run's `turn.completed` came live, what the log
   * holds beyond the last handled event. A live completion was handled after every gap before it
   * was filled from the log, and what the server sent after it reached this connection before the
   * run's outcome did (one ordered stream): reading the whole log once more would only cost its
   * size, which grows with every turn of the session. Events pushed afterwards are not shown.
   */
  async finish(): Promise<void> {
    this.#drain();
    await this.#draining;
    if (!this.#ended && !this.#completed) for (const event of await this.#options.readLog()) this.#handle(event);
    // The view is over: the caller prints the outcome next, and nothing may come after it. A
    // source without one ordered stream (a fleet client reads NOTIFY and the database) can still
    // deliver the child's closing after the run's outcome.
    this.#ended = true;
    this.#queue.length = 0;
  }

  #drain(): void {
    this.#draining = this.#draining
      .then(async () => {
        while (this.#queue.length > 0) {
          const event = this.#queue.shift()!;
          if (event.type !== 'assistant.delta' && this.#last >= 0 && event.seq > this.#last + 1) await this.#fillGap(event.seq);
          this.#handle(event);
        }
      })
      .catch(() => undefined);
  }

  // Renders logged events before `seq` that the live stream did not deliver.
  async #fillGap(seq: number): Promise<void> {
    for (let read = 0; read < GAP_READS; read += 1) {
      const missing = (await this.#options.readLog()).filter((e) => e.seq < seq && e.seq > this.#last);
      for (const event of missing) this.#handle(event);
      if (this.#last >= 0 && this.#last + 1 >= seq) return;
      await sleep(GAP_READ_DELAY_MS);
    }
  }

  #isOurStart(event: RuntimeEvent): boolean {
    return event.type === 'turn.queued' && event.runId === this.#runId;
  }

  // The orchestrator's notes about this turn's settings follow its turn.queued (`turn:<runId>:note:<n>`).
  #isOurNote(event: RuntimeEvent): boolean {
    return event.type === 'log' && event.key.startsWith(`turn:${this.#runId}:note:`);
  }

  #handle(event: RuntimeEvent): void {
    if (this.#ended) return;
    if (event.type === 'assistant.delta') {
      // A delta belongs after the event numbered like it; one older than what was shown is late.
      if (this.#last >= 0 && event.seq >= this.#last) this.#options.render(event);
      return;
    }
    if (this.#last < 0) {
      if (!this.#isOurStart(event)) return;
    } else if (event.seq <= this.#last) {
      return;
    }
    this.#last = event.seq;
    if (this.#behind && event.type !== 'turn.queued' && !this.#isOurNote(event)) {
      if (event.type !== 'session.started' && !(event.type === 'turn.started' && event.runId === this.#runId)) return;
      this.#behind = false;
    }
    // After the turn's end, what follows up to the closing of its child still belongs to it,
    // unless the session's next turn starts on the same child.
    if (this.#completed) {
      if (event.type === 'turn.queued' || event.type === 'turn.started') {
        this.#ended = true;
        return;
      }
      if (event.type === 'session.closed') this.#ended = true;
    }
    this.#options.render(event);
    if (event.type === 'turn.completed' && event.runId === this.#runId) this.#completed = true;
  }
}
