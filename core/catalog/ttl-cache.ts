import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { ensurePrivateDir, writeFileAtomic } from '../store/private-fs.js';

/** Default time an entry stays fresh: one minute. */
export const DEFAULT_CATALOG_TTL_MS = 60_000;

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

// Lookups in flight in this process, by entry file. A lookup is the disk read plus, when needed,
// the refresh, so a caller that arrives while another reads the disk joins it instead of racing
// it. Shared by every cache instance, so callers that each built their own cache still join.
const INFLIGHT = new Map<string, { promise: Promise<CachedValue<unknown>>; forced: boolean }>();

const EntrySchema = z.strictObject({ key: z.string(), fetchedAt: z.number().int().nonnegative(), value: z.unknown() });

export interface TtlCacheOptions<T> {
  /** Directory holding one `<key>.json` file an entry (created 0700 when missing). */
  dir: string;
  /** Checks values read back from disk; an entry that fails it counts as missing. */
  schema: z.ZodType<T>;
  /** How long an entry stays fresh, in ms (default 60 000). */
  ttlMs?: number;
  /** Clock in epoch ms (default `Date.now`). */
  now?: () => number;
  /** Applied to every refreshed value before it is written or returned (e.g. secret redaction). */
  redact?: (value: T) => T;
}

/** A value the cache handed out. */
export interface CachedValue<T> {
  value: T;
  /** When the value was produced by a refresh, in epoch ms. */
  fetchedAt: number;
  /** True when the value came from a fresh entry on disk (no refresh ran for this call). */
  fromCache: boolean;
}

export interface TtlCache<T> {
  /**
   * Returns the fresh entry for `key` without calling `refresh`; otherwise (or with `force`)
   * calls `refresh`, redacts its value, writes it atomically with mode 0600 and returns it.
   * Concurrent calls for one key share ONE lookup and so at most one refresh (process-wide,
   * even across cache instances over the same directory); a forced call joins a forced lookup
   * in progress, or waits for a plain one and then refreshes. A failed refresh rejects every
   * caller that joined it and leaves the old entry unused: an expired entry is never served.
   */
  get(key: string, refresh: () => Promise<T>, options?: { force?: boolean }): Promise<CachedValue<T>>;
  /**
   * Like `get`, except that an entry past its TTL by less than `maxStaleMs` is returned at once
   * with `stale: true` and no refresh started: the caller refreshes it (`get`, which joins a
   * refresh in progress) when it chooses. A missing entry, or one older than that, is refreshed
   * as `get` does. Only for callers that can use a stale value and check what it cannot tell
   * them against a fresh one (core/catalog `loadTurnCatalog`).
   */
  getAllowingStale(key: string, refresh: () => Promise<T>, maxStaleMs: number): Promise<CachedValue<T> & { stale?: true }>;
  /** The file that holds `key`'s entry. */
  pathOf(key: string): string;
  /**
   * The entry on disk for `key` whatever its age (never refreshes), undefined when there is none
   * or it is unreadable. Only for callers that say they serve a stale value (core/catalog
   * `loadTurnCatalog`); `get` never does.
   */
  lastEntry(key: string): Promise<{ value: T; fetchedAt: number } | undefined>;
}

/** Creates a TTL cache of JSON values on disk; see {@link TtlCache.get}. */
export function createTtlCache<T>(options: TtlCacheOptions<T>): TtlCache<T> {
  return new FileTtlCache(options);
}

class FileTtlCache<T> implements TtlCache<T> {
  readonly #options: TtlCacheOptions<T>;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: TtlCacheOptions<T>) {
    this.#options = options;
    this.#ttlMs = options.ttlMs ?? DEFAULT_CATALOG_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  pathOf(key: string): string {
    if (!KEY.test(key))
      throw new OneWorksError('internal', `invalid cache key ${JSON.stringify(key)}: expected letters, digits, '.', '_' or '-'`);
    return join(this.#options.dir, `${key}.json`);
  }

  lastEntry(key: string): Promise<{ value: T; fetchedAt: number } | undefined> {
    return this.#read(key, this.pathOf(key));
  }

  async getAllowingStale(key: string, refresh: () => Promise<T>, maxStaleMs: number): Promise<CachedValue<T> & { stale?: true }> {
    const entry = await this.#read(key, this.pathOf(key));
    if (this.#fresh(entry)) return { ...entry!, fromCache: true };
    const age = entry ? this.#now() - entry.fetchedAt : Number.NaN;
    if (entry && age >= 0 && age < this.#ttlMs + maxStaleMs) return { ...entry, fromCache: true, stale: true };
    return this.get(key, refresh);
  }

  async get(key: string, refresh: () => Promise<T>, options: { force?: boolean } = {}): Promise<CachedValue<T>> {
    const file = this.pathOf(key);
    const force = options.force === true;
    for (;;) {
      const current = INFLIGHT.get(file);
      if (!current) break;
      if (current.forced || !force) return current.promise as Promise<CachedValue<T>>;
      // A forced call must not be answered from the cache: let the lookup in progress finish, then refresh.
      await current.promise.catch(() => undefined);
    }
    // No await between the check above and this set: one lookup per entry at a time.
    const promise: Promise<CachedValue<T>> = this.#lookup(key, file, refresh, force).finally(() => {
      if (INFLIGHT.get(file)?.promise === promise) INFLIGHT.delete(file);
    });
    INFLIGHT.set(file, { promise, forced: force });
    return promise;
  }

  async #lookup(key: string, file: string, refresh: () => Promise<T>, force: boolean): Promise<CachedValue<T>> {
    if (!force) {
      const hit = this.#fresh(await this.#read(key, file));
      if (hit) return { ...hit, fromCache: true };
    }
    return this.#refresh(key, file, refresh);
  }

  async #refresh(key: string, file: string, refresh: () => Promise<T>): Promise<CachedValue<T>> {
    const produced = await refresh();
    const value = this.#options.schema.parse(this.#options.redact ? this.#options.redact(produced) : produced);
    const fetchedAt = this.#now();
    await ensurePrivateDir(this.#options.dir);
    await writeFileAtomic(file, `${JSON.stringify({ key, fetchedAt, value })}\n`, 0o600);
    return { value, fetchedAt, fromCache: false };
  }

  // A missing, unreadable or malformed file is a miss: the refresh replaces it.
  async #read(key: string, file: string): Promise<{ value: T; fetchedAt: number } | undefined> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return undefined;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return undefined;
    }
    const entry = EntrySchema.safeParse(raw);
    if (!entry.success || entry.data.key !== key) return undefined;
    const value = this.#options.schema.safeParse(entry.data.value);
    return value.success ? { value: value.data, fetchedAt: entry.data.fetchedAt } : undefined;
  }

  // Fresh means written within the TTL; a timestamp in the future (clock moved back) is not trusted.
  #fresh(entry: { value: T; fetchedAt: number } | undefined): { value: T; fetchedAt: number } | undefined {
    if (!entry) return undefined;
    const age = this.#now() - entry.fetchedAt;
    return age >= 0 && age < this.#ttlMs ? entry : undefined;
  }
}
