import { createHash } from '../lazy-crypto.js';
import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * Request-key idempotency: creating a session or sending a message with a `requestKey` returns
 * the original handle when the same key comes again with the same arguments, and fails with
 * `request_key_conflict` when it comes with different ones. Keys are durable: every claim is
 * saved through a small persistence interface that the orchestrator implements over its store.
 */

/**
 * What a request key was claimed with: the hash of its arguments and either the handle returned
 * or, while the request is being accepted, a pending reservation (written before the request
 * takes effect, so a crash in between leaves a trace that startup settles, see
 * {@link RequestKeyRegistry.settlePending}).
 */
export const RequestKeyRecordSchema = lazySchema(() =>
  z
    .strictObject({
      /** sha256 (hex) of the canonical JSON of the arguments. */
      argsHash: z.string().regex(/^[0-9a-f]{64}$/),
      /** The JSON handle returned to the first request (e.g. a session id, a turn id). */
      handle: z.unknown().optional(),
      /** What the request reserved before it took effect (e.g. its pre-assigned ids). */
      pending: z.unknown().optional(),
    })
    .refine((record) => (record.handle === undefined) !== (record.pending === undefined), 'exactly one of handle and pending'),
);
export type RequestKeyRecord = z.infer<typeof RequestKeyRecordSchema>;

/** A caller-chosen key: 1 to 256 characters. */
export const RequestKeySchema = lazySchema(() => z.string().min(1).max(256));

/** One durable claim, as `save` receives it: a handle, or a pending reservation. */
export type RequestKeyEntry = { key: string; argsHash: string } & (
  | { handle: unknown; pending?: undefined }
  | { pending: unknown; handle?: undefined }
);

/**
 * Where claims live. `load` returns every saved claim (key → record); `save` must make one
 * claim durable (replacing the key's pending one) before it resolves; `remove` durably forgets
 * a pending claim whose request failed.
 */
export interface RequestKeyPersistence {
  load(): Record<string, unknown> | Promise<Record<string, unknown>>;
  save(entry: RequestKeyEntry): void | Promise<void>;
  remove(key: string): void | Promise<void>;
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
  return Object.fromEntries(
    Object.entries(args).filter(([, value]) => value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0)),
  );
}

/** sha256 (hex) of `canonicalJson(args)`: equal for arguments that differ only in key order. */
export function hashRequestArgs(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

/** Makes a key's handle; `reserve` (optional to call) durably saves a pending claim first. */
export type MakeHandle<H, P> = (reserve: (pending: P) => Promise<void>) => H | Promise<H>;

/**
 * The registry of claimed request keys. Handles (and pending reservations) are validated with
 * their schemas both when loaded and when made, so a reloaded value has the type of a fresh one.
 */
export class RequestKeyRegistry<H, P = never> {
  readonly #persistence: RequestKeyPersistence;
  readonly #handleSchema: z.ZodType<H>;
  readonly #pendingSchema: z.ZodType<P> | undefined;
  readonly #claims = new Map<string, { argsHash: string; handle: H }>();
  // Claims whose handle is still being made: a concurrent claim with the same key waits for it.
  readonly #pending = new Map<string, { argsHash: string; handle: Promise<H> }>();
  // Pending claims loaded from persistence, until settlePending completes or drops them.
  readonly #unsettled = new Map<string, { argsHash: string; pending: P }>();

  private constructor(persistence: RequestKeyPersistence, handleSchema: z.ZodType<H>, pendingSchema: z.ZodType<P> | undefined) {
    this.#persistence = persistence;
    this.#handleSchema = handleSchema;
    this.#pendingSchema = pendingSchema;
  }

  /**
   * Loads every saved claim. Throws OneWorksError `state_corrupt` naming the first malformed
   * key (a bad record, a handle that fails `handleSchema`, a pending claim without or failing
   * `pendingSchema`); persistence errors propagate. Loaded pending claims are settled by
   * {@link settlePending}, which the owner calls before serving any claim.
   */
  static async open<H, P = never>(
    persistence: RequestKeyPersistence,
    handleSchema: z.ZodType<H>,
    pendingSchema?: z.ZodType<P>,
  ): Promise<RequestKeyRegistry<H, P>> {
    const registry = new RequestKeyRegistry<H, P>(persistence, handleSchema, pendingSchema);
    for (const [key, raw] of Object.entries(await persistence.load())) {
      const record = RequestKeyRecordSchema.safeParse(raw);
      const isPending = record.success && record.data.pending !== undefined;
      const value = !record.success
        ? undefined
        : isPending
          ? pendingSchema?.safeParse(record.data.pending)
          : handleSchema.safeParse(record.data.handle);
      if (!record.success || !value?.success) {
        throw new OneWorksError(
          ERROR_CODES.STATE_CORRUPT,
          `request key ${JSON.stringify(key)} has a malformed saved record; One Works will not rewrite it`,
          {
            data: { key },
          },
        );
      }
      if (isPending) registry.#unsettled.set(key, { argsHash: record.data.argsHash, pending: value.data as P });
      else registry.#claims.set(key, { argsHash: record.data.argsHash, handle: value.data as H });
    }
    return registry;
  }

  /**
   * Settles the pending claims a previous process left (it stopped between reserving and
   * saving the handle): `complete` returns the handle the request did produce (the claim is
   * then saved with it) or undefined when the request never took effect (the claim is removed).
   * Call once at startup, before serving claims.
   */
  async settlePending(complete: (pending: P) => Promise<H | undefined>): Promise<void> {
    for (const [key, { argsHash, pending }] of this.#unsettled) {
      const made = await complete(pending);
      if (made === undefined) {
        await this.#persistence.remove(key);
      } else {
        const handle = this.#checked(key, made);
        await this.#persistence.save({ key, argsHash, handle });
        this.#claims.set(key, { argsHash, handle });
      }
      this.#unsettled.delete(key);
    }
  }

  /**
   * Returns the handle of `key`. A new key runs `makeHandle` once, saves the claim, then returns
   * the handle; a key already claimed (or being claimed) with the same arguments returns the
   * original handle without running `makeHandle`. Arguments must name the operation and its
   * target (e.g. `{ op: 'send', sessionId, message }`) so one key cannot serve two operations.
   * `makeHandle` may call its `reserve(pending)` before its request takes effect: the pending
   * claim is durable when that resolves.
   *
   * Throws OneWorksError `request_key_conflict` when the key was claimed with other arguments,
   * `usage` for a malformed key or non-JSON arguments, `internal` when the handle fails
   * `handleSchema` or a reservation `pendingSchema`. When `makeHandle` or `save` fails, the
   * error propagates and the key stays unclaimed (a pending claim is removed; a handle made
   * before a failed save is not remembered).
   */
  async claim(key: string, args: unknown, makeHandle: MakeHandle<H, P>): Promise<H> {
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

  async #make(key: string, argsHash: string, makeHandle: MakeHandle<H, P>): Promise<H> {
    let reserved = false;
    const reserve = async (pending: P): Promise<void> => {
      const parsed = this.#pendingSchema?.safeParse(pending);
      if (!parsed?.success)
        throw new OneWorksError(ERROR_CODES.INTERNAL, `the reservation for request key ${JSON.stringify(key)} is invalid`);
      reserved = true;
      await this.#persistence.save({ key, argsHash, pending: parsed.data });
    };
    let made: H;
    try {
      made = this.#checked(key, await makeHandle(reserve));
    } catch (error) {
      if (reserved) await Promise.resolve(this.#persistence.remove(key)).catch(() => undefined);
      throw error;
    }
    await this.#persistence.save({ key, argsHash, handle: made });
    this.#claims.set(key, { argsHash, handle: made });
    return made;
  }

  #checked(key: string, handle: unknown): H {
    const made = this.#handleSchema.safeParse(handle);
    if (!made.success) {
      throw new OneWorksError(
        ERROR_CODES.INTERNAL,
        `the handle made for request key ${JSON.stringify(key)} is invalid: ${z.prettifyError(made.error)}`,
      );
    }
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
