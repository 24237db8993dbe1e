import type { RuntimeEvent } from '../events/index.js';
import type {
  AppendOptions,
  EventIndex,
  FollowOptions,
  OwnerClaim,
  OwnerRecord,
  ReadEventsOptions,
  SessionRecord,
  SessionScan,
  Store,
} from '../store/index.js';
import type { StagedSession } from './prewarm.js';
import type { SessionBook } from './session-book.js';

/**
 * The Store a SessionRunner sees when the orchestrator runs it. Records and events of sessions
 * the orchestrator keeps a book for go through that book, so the runner's writes merge with the
 * queued runs the orchestrator recorded behind it and both number events in one sequence; those
 * of a prewarmed agent no session has taken yet stay staged in memory (see PrewarmPool); every
 * other call reaches the real store unchanged.
 */
export class RunnerStore implements Store {
  readonly #base: Store;
  readonly #book: (sessionId: string) => { book: SessionBook; base: number } | undefined;
  readonly #staged: (sessionId: string) => StagedSession | undefined;

  /**
   * `book` returns the session's book and the index of the run its runner executes next;
   * `staged` the staged writes of a prewarmed agent's session.
   */
  constructor(
    base: Store,
    book: (sessionId: string) => { book: SessionBook; base: number } | undefined,
    staged: (sessionId: string) => StagedSession | undefined = () => undefined,
  ) {
    this.#base = base;
    this.#book = book;
    this.#staged = staged;
  }

  acquireOwner(owner: OwnerRecord): Promise<OwnerClaim> {
    return this.#base.acquireOwner(owner);
  }

  releaseOwner(): Promise<void> {
    return this.#base.releaseOwner();
  }

  hasSession(sessionId: string): Promise<boolean> {
    return this.#base.hasSession(sessionId);
  }

  writeSession(record: SessionRecord): Promise<void> {
    const staged = this.#staged(record.id);
    if (staged) {
      staged.record = record;
      return Promise.resolve();
    }
    const entry = this.#book(record.id);
    return entry ? entry.book.mergeFromRunner(record) : this.#base.writeSession(record);
  }

  readSession(sessionId: string): Promise<SessionRecord> {
    const staged = this.#staged(sessionId);
    if (staged) return Promise.resolve(staged.record);
    const entry = this.#book(sessionId);
    return entry ? Promise.resolve(entry.book.runnerView(entry.base)) : this.#base.readSession(sessionId);
  }

  listSessions(): Promise<SessionRecord[]> {
    return this.#base.listSessions();
  }

  scanSessions(): Promise<SessionScan> {
    return this.#base.scanSessions();
  }

  appendEvents(sessionId: string, events: readonly RuntimeEvent[], options?: AppendOptions): Promise<void> {
    const staged = this.#staged(sessionId);
    if (staged) {
      staged.events.push(...events);
      return Promise.resolve();
    }
    const entry = this.#book(sessionId);
    return entry ? entry.book.appendFromRunner(events) : this.#base.appendEvents(sessionId, events, options);
  }

  readEvents(sessionId: string, options?: ReadEventsOptions): Promise<RuntimeEvent[]> {
    return this.#base.readEvents(sessionId, options);
  }

  followEvents(sessionId: string, options?: FollowOptions): AsyncIterable<RuntimeEvent> {
    return this.#base.followEvents(sessionId, options);
  }

  eventIndex(sessionId: string): Promise<EventIndex> {
    const staged = this.#staged(sessionId);
    if (staged) return Promise.resolve({ keys: new Set(staged.events.map((e) => e.key)), lastSeq: staged.events.at(-1)?.seq ?? 0 });
    return this.#base.eventIndex(sessionId);
  }
}
