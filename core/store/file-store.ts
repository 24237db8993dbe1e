import { randomBytes } from '../lazy-crypto.js';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from '../lazy-fs-promises.js';
import path from 'node:path';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../errors.js';
import type { RuntimeEvent } from '../events/index.js';
import { checkedEvent } from './checked-event.js';
import { appendToEventLog, appendToEventLogSync, readEventLog } from './event-log.js';
import { followEventLog } from './follow-event-log.js';
import { directorySize } from './dir-size.js';
import { acquireOwnerFile, releaseOwnerFile } from './owner-lock.js';
import { compareIds, compareTimes } from './order.js';
import { ensurePrivateDir, ensurePrivateDirSync, PRIVATE_DIR_MODE, writeFileAtomic } from './private-fs.js';
import { SessionRecordSchema, type OwnerRecord, type SessionRecord } from './records.js';
import { EVENTS_FILE, OWNER_FILE, SESSION_FILE, SESSION_ID_PATTERN, SESSIONS_DIR, sessionDir } from './state-layout.js';
import type {
  AppendOptions,
  CorruptSession,
  EventIndex,
  FollowOptions,
  OwnerClaim,
  ReadEventsOptions,
  SessionScan,
  Store,
} from './store.js';

export interface FileStoreOptions {
  /** fsync the event log after every batch (default false; session records are always fsynced). */
  fsyncEvents?: boolean;
  /** Poll interval of `followEvents`, in ms (default 100). */
  followPollMs?: number;
  /**
   * Read session records and event logs with one synchronous call per file, and open the store
   * and list its session folders with synchronous calls too (default false): for a short command
   * that only reads and exits (`sessions`, `events`), where an asynchronous read's thread-pool
   * round trips (open, stat, read, close, each a turn of the event loop) cost more than the read
   * itself, and the first one starts libuv's thread pool (four threads) for the process. Never in
   * the orchestrator, whose event loop must not wait on disk.
   */
  syncReads?: boolean;
}

/**
 * Opens the file store in `stateDir` (see docs/architecture.md, "State layout"), creating it
 * with mode 0700 when missing; an existing directory keeps its mode (`doctor` reports a loose
 * one). Files are written 0600.
 */
export async function createFileStore(stateDir: string, options: FileStoreOptions = {}): Promise<FileStore> {
  const root = path.resolve(stateDir);
  const sync = options.syncReads === true;
  if (sync) mkdirSync(root, { recursive: true, mode: PRIVATE_DIR_MODE });
  else await mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!(sync ? statSync(root) : await stat(root)).isDirectory()) {
    throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `state directory ${root} is not a directory`, { data: { stateDir: root } });
  }
  if (sync) ensurePrivateDirSync(path.join(root, SESSIONS_DIR));
  else await ensurePrivateDir(path.join(root, SESSIONS_DIR));
  return new FileStore(root, options);
}

/** The embedded Store: one directory per session with `session.json` and `events.jsonl`. */
export class FileStore implements Store {
  readonly stateDir: string;
  readonly #options: FileStoreOptions;
  #owner: OwnerRecord | undefined;
  // Appends to one session are chained so batches land in call order; the first one per
  // session (and the first after a failed one) repairs a torn tail left by a crash.
  readonly #appends = new Map<string, Promise<void>>();
  readonly #tailChecked = new Set<string>();

  constructor(stateDir: string, options: FileStoreOptions = {}) {
    this.stateDir = stateDir;
    this.#options = options;
  }

  async acquireOwner(owner: OwnerRecord): Promise<OwnerClaim> {
    const claim = await acquireOwnerFile(path.join(this.stateDir, OWNER_FILE), owner);
    this.#owner = owner;
    return claim;
  }

  async releaseOwner(): Promise<void> {
    if (!this.#owner) return;
    await releaseOwnerFile(path.join(this.stateDir, OWNER_FILE), this.#owner);
    this.#owner = undefined;
  }

  async hasSession(sessionId: string): Promise<boolean> {
    return stat(this.#sessionFile(sessionId)).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
  }

  async writeSession(record: SessionRecord): Promise<void> {
    const parsed = SessionRecordSchema.safeParse(record);
    if (!parsed.success) {
      throw new OneWorksError(
        ERROR_CODES.INTERNAL,
        `refusing to write an invalid record for session ${record.id}: ${parsed.error.message}`,
        {
          data: { sessionId: record.id },
          cause: parsed.error,
        },
      );
    }
    const file = this.#sessionFile(record.id);
    await ensurePrivateDir(sessionDir(this.stateDir, record.id))
      .then(() => writeFileAtomic(file, `${JSON.stringify(parsed.data, null, 2)}\n`))
      .catch((error: unknown) => {
        throw unwritable(file, error);
      });
  }

  async readSession(sessionId: string): Promise<SessionRecord> {
    const file = this.#sessionFile(sessionId);
    let text: string;
    try {
      text = this.#options.syncReads ? readFileSync(file, 'utf8') : await readFile(file, 'utf8');
    } catch (error) {
      throw this.#unreadable(sessionId, error);
    }
    return checkedRecord(sessionId, file, text);
  }

  // readSession for a scan: a small local file is read at once, without thread-pool round trips.
  #readSessionNow(sessionId: string): SessionRecord {
    const file = this.#sessionFile(sessionId);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw this.#unreadable(sessionId, error);
    }
    return checkedRecord(sessionId, file, text);
  }

  #unreadable(sessionId: string, error: unknown): unknown {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return error;
    return new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in ${this.stateDir}`, { data: { sessionId } });
  }

  async removeSession(sessionId: string): Promise<number> {
    if (!(await this.hasSession(sessionId))) {
      throw new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in ${this.stateDir}`, { data: { sessionId } });
    }
    const dir = sessionDir(this.stateDir, sessionId);
    // A dot name is no session id: listings stop seeing it at the rename, before the slow delete.
    const doomed = path.join(path.dirname(dir), `.removing-${sessionId}-${randomBytes(4).toString('hex')}`);
    await rename(dir, doomed);
    const bytes = await directorySize(doomed);
    await rm(doomed, { recursive: true, force: true });
    return bytes;
  }

  async listSessions(): Promise<SessionRecord[]> {
    return (await this.scanSessions()).records;
  }

  async scanSessions(): Promise<SessionScan> {
    const folder = path.join(this.stateDir, SESSIONS_DIR);
    const entries = this.#options.syncReads ? readdirSync(folder, { withFileTypes: true }) : await readdir(folder, { withFileTypes: true });
    const ids = entries.filter((entry) => entry.isDirectory() && SESSION_ID_PATTERN.test(entry.name)).map((entry) => entry.name);
    const records: SessionRecord[] = [];
    const corrupt: CorruptSession[] = [];
    for (const [index, id] of ids.entries()) {
      // Read synchronously (an async read of each small record costs several thread-pool round
      // trips: far more CPU than the read), in batches between which other work runs.
      if (index > 0 && index % SCAN_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
      let error: unknown;
      try {
        records.push(this.#readSessionNow(id));
        continue;
      } catch (caught) {
        error = caught;
      }
      // A folder without a record (a home prepared before the first write) is not a session yet.
      if (isOneWorksError(error, ERROR_CODES.SESSION_NOT_FOUND)) continue;
      if (!isOneWorksError(error, ERROR_CODES.STATE_CORRUPT)) throw error;
      const { file, reason } = error.data as { file: string; reason: string };
      corrupt.push({ sessionId: id, file, reason });
    }
    records.sort((a, b) => compareTimes(a.createdAt, b.createdAt));
    corrupt.sort((a, b) => compareIds(a.sessionId, b.sessionId));
    return { records, corrupt };
  }

  async appendEvents(sessionId: string, events: readonly RuntimeEvent[], options: AppendOptions = {}): Promise<void> {
    // Everything up to the chaining is synchronous, so batches are chained in call order.
    const file = this.#eventsFile(sessionId);
    if (events.length === 0) return;
    // One join for the batch (no string built per line first).
    const lines = `${events.map((event) => JSON.stringify(checkedEvent(sessionId, event))).join('\n')}\n`;
    const fsync = options.fsync ?? this.#options.fsyncEvents ?? false;
    const append = async (): Promise<void> => {
      try {
        const repair = !this.#tailChecked.has(sessionId);
        if (fsync) {
          await ensurePrivateDir(path.dirname(file));
          await appendToEventLog(file, lines, { repair, fsync });
        } else {
          ensurePrivateDirSync(path.dirname(file));
          appendToEventLogSync(file, lines, { repair });
        }
        this.#tailChecked.add(sessionId);
      } catch (error) {
        // A failed write may itself have left a torn line: check the tail again next time.
        this.#tailChecked.delete(sessionId);
        throw unwritable(file, error);
      }
    };
    const next = (this.#appends.get(sessionId) ?? Promise.resolve()).then(append);
    this.#appends.set(
      sessionId,
      next.catch(() => undefined),
    );
    return next;
  }

  async readEvents(sessionId: string, options: ReadEventsOptions = {}): Promise<RuntimeEvent[]> {
    const types = options.types ? new Set<string>(options.types) : undefined;
    const events = await readEventLog(this.#eventsFile(sessionId), { sync: this.#options.syncReads, types });
    const afterSeq = options.afterSeq ?? 0;
    return events.filter((event) => event.seq > afterSeq);
  }

  async *followEvents(sessionId: string, options: FollowOptions = {}): AsyncIterable<RuntimeEvent> {
    yield* followEventLog(this.#eventsFile(sessionId), { ...options, pollMs: this.#options.followPollMs });
  }

  async eventIndex(sessionId: string): Promise<EventIndex> {
    const events = await readEventLog(this.#eventsFile(sessionId));
    const keys = new Set<string>();
    let lastSeq = 0;
    for (const event of events) {
      keys.add(event.key);
      lastSeq = Math.max(lastSeq, event.seq);
    }
    return { keys, lastSeq };
  }

  #sessionFile(sessionId: string): string {
    return path.join(sessionDir(this.stateDir, sessionId), SESSION_FILE);
  }

  #eventsFile(sessionId: string): string {
    return path.join(sessionDir(this.stateDir, sessionId), EVENTS_FILE);
  }
}

/** Records a scan reads synchronously before it lets other work run. */
const SCAN_BATCH = 32;

// Errors of a file system that refuses writes: the state directory's problem, not a bug.
const UNWRITABLE: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an I/O error',
};

function unwritable(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why = code === undefined ? undefined : UNWRITABLE[code];
  if (why === undefined) return error;
  return new OneWorksError(
    ERROR_CODES.STATE_UNWRITABLE,
    `cannot write ${file}: ${why} (${code}); free space or fix the state directory, then retry`,
    { data: { file, code }, cause: error },
  );
}

/** Longest JSON error text kept in a reason (Node quotes part of the input in some of them). */
const MAX_JSON_REASON_CHARS = 120;

// A record's text parsed and checked; a failure says what is wrong in words, without the content.
function parseSessionRecord(text: string): { ok: true; record: SessionRecord } | { ok: false; reason: string; cause: unknown } {
  if (text.trim() === '') return { ok: false, reason: 'the file is empty', cause: undefined };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const cut = detail.length > MAX_JSON_REASON_CHARS ? `${detail.slice(0, MAX_JSON_REASON_CHARS)}…` : detail;
    const truncated = endsTooEarly(text, detail) ? ' (the file ends too early: truncated?)' : '';
    return { ok: false, reason: `not valid JSON: ${cut}${truncated}`, cause: error };
  }
  const parsed = SessionRecordSchema.safeParse(json);
  if (parsed.success) return { ok: true, record: parsed.data };
  const problems = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`);
  const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
  return { ok: false, reason: `${problems.join('; ')}${more}`, cause: parsed.error };
}

// JSON.parse failed at (or past) the last character: the text is cut short rather than mistyped.
function endsTooEarly(text: string, detail: string): boolean {
  if (/end of JSON input/i.test(detail)) return true;
  const position = /at position (\d+)/.exec(detail)?.[1];
  return position !== undefined && Number(position) >= text.trimEnd().length;
}

// A record's text checked; throws `state_corrupt` naming the file when it is malformed.
function checkedRecord(sessionId: string, file: string, text: string): SessionRecord {
  const parsed = parseSessionRecord(text);
  if (!parsed.ok) throw corruptRecord(sessionId, file, parsed.reason, parsed.cause);
  return parsed.record;
}

function corruptRecord(sessionId: string, file: string, reason: string, cause: unknown): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.STATE_CORRUPT,
    `session ${sessionId} cannot be read: its record ${file} is malformed (${reason}). One Works leaves it alone and goes on with the other sessions; fix the file or move the session folder away (\`one-works doctor\` lists every bad record)`,
    { data: { sessionId, file, reason }, ...(cause === undefined ? {} : { cause }) },
  );
}
