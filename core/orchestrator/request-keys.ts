import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * Request-key idempotency: creating a session or sending a message with a `requestKey` returns
 * the original handle when the same key comes again with the same arguments, and fails with
 * `request_key_conflict` when it comes with different ones. Keys are durable: every claim is
 * saved through a small persistence interface that the orchestrator implements over its store.
 */

/** What a request key was first claimed with: the hash of its arguments and the handle returned. */
export const RequestKeyRecordSchema = z.strictObject({
  /** sha256 (hex) of the canonical JSON of the arguments. */
  argsHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The JSON handle returned to the first request (e.g. a session id, a turn id). */
  handle: z.unknown(),
});
export type RequestKeyRecord = z.infer<typeof RequestKeyRecordSchema>;

/** A caller-chosen key: 1 to 256 characters. */
export const RequestKeySchema = z.string().min(1).max(256);

/** One durable claim, as `save` receives it. */
export interface RequestKeyEntry extends RequestKeyRecord {
  key: string;
}

/**
 * Where claims live. `load` returns every saved claim (key → record); `save` must make one new
 * claim durable before it resolves. Claims are never updated or deleted by the registry.
 */
export interface RequestKeyPersistence {
  load(): Record<string, unknown> | Promise<Record<string, unknown>>;
  save(entry: RequestKeyEntry): void | Promise<void>;
}

/**
 * The canonical JSON of `value`: object keys sorted, `undefined` members left out (as
 * JSON.stringify does), arrays in order. Throws OneWorksError `usage` for anything JSON cannot
 * carry faithfully (functions, bigints, symbols, non-finite numbers, non-plain objects).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  throw new OneWorksError(ERROR_CODES.USAGE, `request arguments must be plain JSON; found ${describeValue(value)}`);
}

/**
 * The arguments of a request as its key is checked against: top-level members that are
 * `undefined`, `false` or an empty array are left out, since every client means "not asked"
 * by them (one sends `interrupt: false` or `labels: []` where another omits the member).
 */
export function normalizeRequestArgs(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0)));
}

/** sha256 (hex) of `canonicalJson(args)`: equal for arguments that differ only in key order. */
export function hashRequestArgs(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

/**
 * The registry of claimed request keys. Handles are validated with `handleSchema` both when
 * loaded and when made, so a reloaded handle has the same type as a fresh one.
 */
export class RequestKeyRegistry<H> {
  readonly #persistence: RequestKeyPersistence;
  readonly #handleSchema: z.ZodType<H>;
  readonly #claims = new Map<string, { argsHash: string; handle: H }>();
  // Claims whose handle is still being made: a concurrent claim with the same key waits for it.
  readonly #pending = new Map<string, { argsHash: string; handle: Promise<H> }>();

  private constructor(persistence: RequestKeyPersistence, handleSchema: z.ZodType<H>) {
    this.#persistence = persistence;
    this.#handleSchema = handleSchema;
  }

  /**
   * Loads every saved claim. Throws OneWorksError `state_corrupt` naming the first malformed
   * key (a bad record or a handle that fails `handleSchema`); persistence errors propagate.
   */
  static async open<H>(persistence: RequestKeyPersistence, handleSchema: z.ZodType<H>): Promise<RequestKeyRegistry<H>> {
    const registry = new RequestKeyRegistry(persistence, handleSchema);
    for (const [key, raw] of Object.entries(await persistence.load())) {
      const record = RequestKeyRecordSchema.safeParse(raw);
      const handle = record.success ? handleSchema.safeParse(record.data.handle) : undefined;
      if (!record.success || !handle?.success) {
        throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `request key ${JSON.stringify(key)} has a malformed saved record; One Works will not rewrite it`, {
          data: { key },
        });
      }
      registry.#claims.set(key, { argsHash: record.data.argsHash, handle: handle.data });
    }
    return registry;
  }

  /**
   * Returns the handle of `key`. A new key runs `makeHandle` once, saves the claim, then returns
   * the handle; a key already claimed (or being claimed) with the same arguments returns the
   * original handle without running `makeHandle`. Arguments must name the operation and its
   * target (e.g. `{ op: 'send', sessionId, message }`) so one key cannot serve two operations.
   *
   * Throws OneWorksError `request_key_conflict` when the key was claimed with other arguments,
   * `usage` for a malformed key or non-JSON arguments, `internal` when the handle fails
   * `handleSchema`. When `makeHandle` or `save` fails, the error propagates and the key stays
   * unclaimed (a handle made before a failed save is not remembered).
   */
  async claim(key: string, args: unknown, makeHandle: () => H | Promise<H>): Promise<H> {
    if (!RequestKeySchema.safeParse(key).success) {
      throw new OneWorksError(ERROR_CODES.USAGE, 'a request key must be 1 to 256 characters long', { data: { length: key.length } });
    }
    const argsHash = hashRequestArgs(args);
    const known = this.#claims.get(key) ?? this.#pending.get(key);
    if (known) {
      if (known.argsHash !== argsHash) throw conflict(key);
      return known.handle;
    }
    const handle = this.#make(key, argsHash, makeHandle);
    this.#pending.set(key, { argsHash, handle });
    try {
      return await handle;
    } finally {
      this.#pending.delete(key);
    }
  }

  /** The handle of a claimed key, if any (no arguments check): for status and diagnostics. */
  lookup(key: string): H | undefined {
    return this.#claims.get(key)?.handle;
  }

  async #make(key: string, argsHash: string, makeHandle: () => H | Promise<H>): Promise<H> {
    const made = this.#handleSchema.safeParse(await makeHandle());
    if (!made.success) {
      throw new OneWorksError(ERROR_CODES.INTERNAL, `the handle made for request key ${JSON.stringify(key)} is invalid: ${z.prettifyError(made.error)}`);
    }
    await this.#persistence.save({ key, argsHash, handle: made.data });
    this.#claims.set(key, { argsHash, handle: made.data });
    return made.data;
  }
}

function conflict(key: string): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.REQUEST_KEY_CONFLICT,
    `request key ${JSON.stringify(key)} was already used with different arguments; use a new key for a different request`,
    { data: { key } },
  );
}

function describeValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object') return `an object of class ${(value as object).constructor?.name ?? 'unknown'}`;
  return `a ${typeof value}`;
}
