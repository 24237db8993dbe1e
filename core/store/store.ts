import type { RuntimeEvent, RuntimeEventType } from '../events/index.js';
import type { OwnerRecord, SessionRecord } from './records.js';

/** The outcome of taking ownership of the state. */
export interface OwnerClaim {
  /** True when a stale owner (its pid gone, same host) was replaced. */
  recovered: boolean;
  /** The stale owner that was replaced, when `recovered`. */
  previous?: OwnerRecord;
}

/** A session whose record cannot be read: that session's problem alone, never the others'. */
export interface CorruptSession {
  sessionId: string;
  /** The record file. */
  file: string;
  /** What is wrong with it, in words (the JSON error or the first schema problems); no record content. */
  reason: string;
}

/** Every session folder with a record: the readable records (oldest first) and the corrupt ones. */
export interface SessionScan {
  records: SessionRecord[];
  corrupt: CorruptSession[];
}

/** What the store knows about a session's event log, so a new process continues it. */
export interface EventIndex {
  /** Every key already written: drafts with these keys are dropped. */
  keys: Set<string>;
  /** Highest seq written, 0 when the log is empty (the first event is seq 1). */
  lastSeq: number;
}

export interface AppendOptions {
  /** fsync the log after this batch (default: the store's setting). */
  fsync?: boolean;
}

export interface ReadEventsOptions {
  /** Only events with a greater seq (default 0: everything). */
  afterSeq?: number;
  /** Only events of these types (default: every type); a reader that wants a few types skips building the others. */
  types?: readonly RuntimeEventType[];
}

export interface FollowOptions {
  /** Yield only events with a greater seq (default 0: everything). */
  afterSeq?: number;
  /** Ends the iteration (it returns, it does not throw). */
  signal?: AbortSignal;
}

/**
 * Durable state behind one small interface: the single-owner lock, session records and the
 * append-only per-session event log. The file store is the embedded default; a shared database
 * store can implement the same interface later. Every failure is a OneWorksError:
 * `state_locked`, `session_not_found`, `state_corrupt` (a malformed file is reported, never
 * rewritten), `usage` (an invalid session id), `internal` (an invalid record or event passed in).
 */
export interface Store {
  /** Takes ownership for this process; throws `state_locked` while another live owner holds it. */
  acquireOwner(owner: OwnerRecord): Promise<OwnerClaim>;
  /** Gives ownership up, if this store holds it. Idempotent. */
  releaseOwner(): Promise<void>;
  hasSession(sessionId: string): Promise<boolean>;
  /** Validates and replaces the record atomically. */
  writeSession(record: SessionRecord): Promise<void>;
  /** Throws `session_not_found` or `state_corrupt`. */
  readSession(sessionId: string): Promise<SessionRecord>;
  /**
   * Every readable session record, oldest first. A malformed record is left out (and left
   * alone): one bad file never hides the other sessions. `scanSessions` reports it.
   */
  listSessions(): Promise<SessionRecord[]>;
  /** The readable records, oldest first, and the malformed ones with what is wrong with each. */
  scanSessions(): Promise<SessionScan>;
  /** Appends a batch of stamped events in order, in one write. Appends to one session are serialised. */
  appendEvents(sessionId: string, events: readonly RuntimeEvent[], options?: AppendOptions): Promise<void>;
  /**
   * The recorded events (after `afterSeq`; of `types` only, when given), oldest first; a torn final
   * line is ignored. A malformed event of any type is `state_corrupt`, with or without `types`.
   */
  readEvents(sessionId: string, options?: ReadEventsOptions): Promise<RuntimeEvent[]>;
  /** The recorded events, then new ones as they are appended, until `signal` aborts. */
  followEvents(sessionId: string, options?: FollowOptions): AsyncIterable<RuntimeEvent>;
  /** Keys and last seq of the log, to continue numbering and dedup across restarts. */
  eventIndex(sessionId: string): Promise<EventIndex>;
  /**
   * Deletes a session: its record, event log and session HOME, at once for readers (the folder
   * is renamed away first). Resolves with the bytes freed; `session_not_found` when it has no
   * record. Optional: a store that cannot delete leaves it out.
   */
  removeSession?(sessionId: string): Promise<number>;
}
