import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Adapter, ResolvedCli } from '../adapter.js';
import { OneWorksError } from '../errors.js';
import { Redactor } from '../redact.js';
import { withThrowawaySandbox } from '../session/throwaway.js';
import { CatalogSchema, type Catalog, type CatalogRequest } from './schema.js';
import { createTtlCache, type CachedValue, type TtlCache } from './ttl-cache.js';

export interface LoadCatalogOptions {
  adapter: Adapter<unknown>;
  /** The adapter's parsed config block. */
  config: unknown;
  /** The prepared CLI binary. */
  cli: ResolvedCli;
  /** `<cache>` root; entries live in `<cache>/catalog/`. */
  cacheDir: string;
  /** Every secret of the configuration: redacted from the cached entry and from error messages. */
  secrets: readonly string[];
  request?: CatalogRequest;
  /** Refresh even when a fresh entry exists. */
  force?: boolean;
  /** Freshness in ms (default 60 000). */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The adapter's catalog for this config and binary: from `<cache>/catalog/` when an entry is
 * younger than the TTL, otherwise listed by starting the CLI in a throwaway sandbox (removed
 * afterwards) and cached. Throws OneWorksError `usage` when the adapter has no catalog; a failed
 * listing rejects (the adapter's OneWorksError, or `probe_failed`; either way with every secret
 * redacted from message and data) and no stale entry is used.
 */
export async function loadCatalog(options: LoadCatalogOptions): Promise<CachedValue<Catalog>> {
  const { cache, key, list } = catalogSource(options);
  return cache.get(key, list, options.force ? { force: true } : {});
}

/**
 * How long past its freshness (the TTL, a minute) a catalog entry may serve the model check before
 * a turn: ten minutes. A model or effort the entry does not allow is still checked against a fresh
 * listing before it is refused, and that listing replaces the entry.
 */
export const TURN_CATALOG_STALE_MS = 10 * 60_000;

/** What the model check before a turn checks against; see {@link loadTurnCatalog}. */
export interface TurnCatalog {
  /** The catalog to check with; undefined: nothing can be checked (the turn goes on unchecked). */
  catalog: Catalog | undefined;
  /** Set when the catalog is not a fresh listing: what was used instead and why (for a warning). */
  note?: string;
  /**
   * Set when `catalog` is an entry past its freshness, served as is (`allowStaleMs`): the fresh
   * listing, as a {@link loadTurnCatalog} without that option (it joins a listing in progress).
   * The caller runs it when it chooses, and before it refuses anything the stale entry lacks.
   */
  refresh?: () => Promise<TurnCatalog>;
}

/**
 * The catalog the model check before a turn uses: {@link loadCatalog}'s (with `allowStaleMs`, an
 * entry past its freshness by less than that is served as is, with its `refresh`), except when the listing
 * fails because the CLI cannot start at all and the adapter's turns go on without it
 * (`CatalogProvider.unreachable` says how, e.g. droid with `fallback: oneshot`). Then the last
 * entry listed for the same facts is used however old (a model it does not list is still
 * refused), or, when none was ever listed, nothing is checked; `note` says which, and why. Any
 * other failure rejects as {@link loadCatalog} does: a CLI that starts is always asked.
 */
export async function loadTurnCatalog(options: LoadCatalogOptions, turn: { allowStaleMs?: number } = {}): Promise<TurnCatalog> {
  const { cache, key, list } = catalogSource(options);
  try {
    if (turn.allowStaleMs !== undefined) {
      const entry = await cache.getAllowingStale(key, list, turn.allowStaleMs);
      return entry.stale ? { catalog: entry.value, refresh: () => loadTurnCatalog(options) } : { catalog: entry.value };
    }
    return { catalog: (await cache.get(key, list)).value };
  } catch (error) {
    const how = error instanceof OneWorksError ? options.adapter.catalog?.unreachable?.(options.config, error) : undefined;
    if (how === undefined) throw error;
    const name = options.adapter.name;
    const why = `${name} cannot start to list its models (${(error as OneWorksError).code}: ${truncate((error as OneWorksError).message, 300)}) and ${how}`;
    const last = await cache.lastEntry(key);
    if (!last)
      return {
        catalog: undefined,
        note: `${why}; no catalog of ${name} was ever listed here, so the model could not be checked and is passed to ${name} as is`,
      };
    return {
      catalog: last.value,
      note: `${why}; the model was checked against ${name}'s last known catalog, listed ${new Date(last.fetchedAt).toISOString()}`,
    };
  }
}

/**
 * The catalog entry cached for these options whatever its age, or undefined when there is none;
 * never lists. For preparing in idle time (an orchestrator's): a turn reads and checks it again.
 */
export async function readCatalogEntry(options: LoadCatalogOptions): Promise<Catalog | undefined> {
  const { cache, key } = catalogSource(options);
  return (await cache.lastEntry(key))?.value;
}

// The cache, key and listing of one adapter's catalog for these options.
function catalogSource(options: LoadCatalogOptions): { cache: TtlCache<Catalog>; key: string; list: () => Promise<Catalog> } {
  const { adapter, config, cli } = options;
  const provider = adapter.catalog;
  if (!provider) throw new OneWorksError('usage', `adapter ${adapter.name} cannot list models or tools`);
  const request = options.request ?? {};
  const redactor = new Redactor();
  for (const secret of options.secrets) redactor.register(secret);
  const cache = createTtlCache({
    dir: join(options.cacheDir, 'catalog'),
    schema: CatalogSchema,
    redact: (value) => redactor.redactValue(value),
    ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
    ...(options.now ? { now: options.now } : {}),
  });
  const key = catalogCacheKey(adapter.name, provider.cacheFacts(config, cli, request));
  const list = (): Promise<Catalog> =>
    withThrowawaySandbox({ purpose: 'catalog', secrets: options.secrets }, async ({ launch, workdir, redactor: sandboxRedactor }) => {
      try {
        return await provider.list(config, cli, launch, workdir, request);
      } catch (error) {
        throw redactedError(error, sandboxRedactor, `listing the catalog of ${adapter.name} ${cli.version} failed`);
      }
    });
  return { cache, key, list };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

// Errors leave with no secret in them: a OneWorksError keeps its code (a copy is made only when
// its message or data held a secret); anything else becomes `probe_failed`.
function redactedError(error: unknown, redactor: Redactor, what: string): OneWorksError {
  if (!(error instanceof OneWorksError))
    return new OneWorksError('probe_failed', `${what}: ${redactor.redact(String(error))}`, { cause: error });
  const message = redactor.redact(error.message);
  const data = error.data && redactor.redactValue(error.data);
  if (message === error.message && JSON.stringify(data) === JSON.stringify(error.data)) return error;
  return new OneWorksError(error.code, message, { ...(data ? { data } : {}), cause: error });
}

/**
 * The cache key of an adapter's catalog: `<adapter>-<first 16 hex of sha256(facts)>`, where the
 * facts are serialised with sorted object keys so that key order does not matter.
 */
export function catalogCacheKey(adapterName: string, facts: unknown): string {
  const digest = createHash('sha256').update(stableJson(facts)).digest('hex').slice(0, 16);
  return `${adapterName.replace(/[^A-Za-z0-9_-]/g, '_')}-${digest}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
