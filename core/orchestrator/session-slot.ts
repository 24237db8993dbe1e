import type { PresentationEnv } from '../process/index.js';
import type { SessionRunner } from '../session/index.js';
import type { SessionBook } from './session-book.js';
import type { EffectiveSettings } from './types.js';

/**
 * One accepted turn, from queued to released. Cancelling it before its runner attached the
 * abort listener is remembered and delivered right after `turn.started` (see `requestCancel`).
 */
export class Turn {
  readonly runId: string;
  readonly turnId: string;
  readonly prompt: string;
  readonly settings: EffectiveSettings;
  /** The submitting client's presentation variables; undefined: the server's own. */
  readonly presentation: PresentationEnv | undefined;
  readonly abort = new AbortController();
  /** Settles once its queued record is persisted. */
  recorded: Promise<void> = Promise.resolve();
  /** Settles once the turn is released (set when admission starts it). */
  done: Promise<void> | undefined;
  #cancelRequested = false;
  #promptStarted = false;

  constructor(sessionId: string, runId: string, prompt: string, settings: EffectiveSettings, presentation?: PresentationEnv) {
    this.runId = runId;
    this.presentation = presentation;
    this.turnId = `${sessionId}/${runId}`;
    this.prompt = prompt;
    this.settings = settings;
  }

  get cancelRequested(): boolean {
    return this.#cancelRequested;
  }

  /** Asks the live turn to stop through the runner's cancel path (interrupt → grace → stop). */
  requestCancel(): void {
    this.#cancelRequested = true;
    if (this.#promptStarted) this.abort.abort();
  }

  /**
   * The runner emitted this turn's `turn.started`: it attaches its abort listener synchronously
   * right after, so a cancel that came earlier is delivered on the next microtask.
   */
  promptStarted(): void {
    this.#promptStarted = true;
    if (this.#cancelRequested) queueMicrotask(() => this.abort.abort());
  }
}

/** The orchestrator's state of one session it has touched in this process. */
export class SessionSlot {
  readonly book: SessionBook;
  /** Accepted turns not yet released, by run id (queued and live). */
  readonly turns = new Map<string, Turn>();
  runner: SessionRunner | undefined;
  /** Index of the run the current runner was opened for (what it sees as its history). */
  runnerBase = 0;
  /**
   * True while the runner is one started for this session's first turn as the session was
   * created (its agent started ahead of the turn): the turn needs no liveness check of it.
   */
  startedForFirstTurn = false;
  #unsubscribe: (() => void) | undefined;
  #closing: Promise<void> = Promise.resolve();
  #readyAhead: { runner: SessionRunner; ready: Promise<boolean>; atMs: number } | undefined;

  constructor(book: SessionBook) {
    this.book = book;
  }

  get id(): string {
    return this.book.id;
  }

  /** Attaches a freshly opened runner: its events flow into the book, `turn.started` reaches its turn. */
  attach(runner: SessionRunner): void {
    this.runner = runner;
    this.#unsubscribe = runner.subscribe((event) => {
      this.book.forward(event);
      if (event.type === 'turn.started') this.turns.get(event.runId)?.promptStarted();
    });
  }

  /**
   * Starts the runner's liveness check (`SessionRunner.ready`) now, for the turn about to be
   * accepted, so that it runs while that turn is recorded; `takeReadyAhead` hands it over.
   */
  checkReadyAhead(timeoutMs: number): void {
    if (this.runner && !this.#readyAhead)
      this.#readyAhead = { runner: this.runner, ready: this.runner.ready(timeoutMs), atMs: performance.now() };
  }

  /**
   * The liveness check `checkReadyAhead` started, once: undefined when none was, the runner
   * changed since, or it is older than `freshMs` (then the caller checks again).
   */
  takeReadyAhead(freshMs: number): Promise<boolean> | undefined {
    const ahead = this.#readyAhead;
    this.#readyAhead = undefined;
    return ahead && ahead.runner === this.runner && performance.now() - ahead.atMs <= freshMs ? ahead.ready : undefined;
  }

  /**
   * Stops the runner's child (if any) and logs its `session.closed` event with `reason`. The
   * slot has no runner from the call on; `closed()` waits until the child is gone.
   */
  async closeRunner(reason: string): Promise<void> {
    const runner = this.runner;
    if (!runner) return this.closed();
    this.runner = undefined;
    this.startedForFirstTurn = false;
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    const closing = (async () => {
      try {
        await runner.close(reason);
      } finally {
        unsubscribe?.();
      }
    })();
    this.#closing = closing.catch(() => undefined);
    return closing;
  }

  /** Resolves once the last runner closed (a new runner of the session never overlaps its predecessor's child). */
  closed(): Promise<void> {
    return this.#closing;
  }
}
