import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { lazySchema } from '../lazy-schema.js';
import { PermissionPolicySchema } from '../permissions/policy.js';

/**
 * The schema of `one-works.yaml`. Strict: an unknown key is an error. Every optional key has a
 * default, except `state.directory` and `cache.directory`, whose defaults depend on the
 * environment and are filled by `loadConfig`. Adapter blocks are supplied by the caller (cli), so
 * this file names no adapter.
 */

/** An absolute file-system path. `~` is not expanded. */
export const AbsolutePathSchema = z.string().superRefine((value, ctx) => {
  if (isAbsolute(value)) return;
  const hint = value.startsWith('~') ? ' (~ is not expanded; write the full path)' : '';
  ctx.addIssue({ code: 'custom', message: `expected an absolute path, got ${JSON.stringify(value)}${hint}` });
});

const DirectoryBlockSchema = z
  .strictObject({
    directory: AbsolutePathSchema.optional().describe('Absolute directory; the default follows the XDG base directories.'),
  })
  .prefault({});

/** The PostgreSQL database of `state.backend: postgres`. */
export const PostgresStateSchema = z
  .strictObject({
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
      .meta({
        secret: true,
        description:
          'Connection URL, postgres://user:password@host:port/database (a secret: write ${VAR} to take it from the environment).',
      }),
  })
  .describe('The PostgreSQL database of the postgres backend.');

export const StateSchema = z
  .strictObject({
    directory: AbsolutePathSchema.optional().describe(
      'Absolute directory (session homes, and with the file backend records and event logs); the default follows the XDG base directories.',
    ),
    backend: z
      .enum(['file', 'postgres'])
      .default('file')
      .describe('Where records, event logs and request keys live: file (the state directory) or postgres (state.postgres.url).'),
    postgres: PostgresStateSchema.optional(),
    sharedHomes: z
      .boolean()
      .optional()
      .describe(
        "Fleet (serve --worker): every worker's state.directory is on shared storage, so a worker may adopt the sessions of a worker whose lease expired (default: they wait for it).",
      ),
  })
  .superRefine((state, ctx) => {
    if (state.backend === 'postgres' && state.postgres === undefined) {
      ctx.addIssue({ code: 'custom', path: ['postgres'], message: 'state.backend is postgres: set state.postgres.url' });
    }
  })
  .prefault({})
  .describe('Durable state: session records, event logs, session homes.');
export const CacheSchema = DirectoryBlockSchema.describe('Caches: managed CLI installs, model catalogs.');

const IsolationSchema = z.enum(['none', 'worktree']);

/** One approved root: its absolute path, or the path with the root's own `isolation`. */
export const ApprovedRootSchema = z.union([
  AbsolutePathSchema,
  z.strictObject({
    path: AbsolutePathSchema.describe('Absolute root that sessions may work in.'),
    isolation: IsolationSchema.optional().describe(
      "This root's default isolation of new sessions, over workspaces.isolation (an explicit --worktree / --no-worktree, or worktree: true / false in MCP, still wins).",
    ),
  }),
]);

/** The path of an approved root entry. */
export function approvedRootPath(entry: z.output<typeof ApprovedRootSchema>): string {
  return typeof entry === 'string' ? entry : entry.path;
}

export const WorkspacesSchema = z
  .strictObject({
    approved: z
      .array(ApprovedRootSchema)
      .default([])
      .describe('Absolute roots that sessions may work in: a path, or {path, isolation} to give the root its own default isolation.'),
    isolation: IsolationSchema.default('none').describe(
      'worktree: run, submit and MCP create_session start every new session in a git worktree of its repository (as with --worktree; --no-worktree or worktree: false opts out). A root in approved may set its own.',
    ),
    gitHooks: z
      .boolean()
      .default(false)
      .describe("Run the repository's git hooks when One Works runs git for worktree sessions (default: never)."),
  })
  .prefault({})
  .describe('Workspaces that agents may be started in.');

export const OrchestratorSchema = z
  .strictObject({
    maxConcurrentRuns: z.number().int().min(1).max(64).default(4).describe('Turns running at once, across sessions (1..64).'),
    maxQueuedTotal: z.number().int().min(1).default(64).describe('Queued turns across all sessions.'),
    maxQueuedPerSession: z.number().int().min(1).default(8).describe('Queued turns per session.'),
    cancelGraceMs: z.number().int().min(0).default(5000).describe('Wait after a protocol interrupt before killing, in ms.'),
    runTimeoutMs: z.number().int().positive().default(3_600_000).describe('Longest a single turn may run, in ms.'),
    idleExitMs: z.number().int().min(0).default(600_000).describe('Idle time before a background server exits, in ms.'),
    askTimeoutMs: z
      .number()
      .int()
      .min(0)
      .default(600_000)
      .describe(
        'How long an escalated permission ask or question stays open for an answer (terminal, one-works answer, MCP), in ms; 0 declines at once when no terminal follows the turn.',
      ),
    keepWarmMs: z
      .number()
      .int()
      .min(0)
      .default(300_000)
      .describe(
        "How long a session's agent stays up after its turn so that the next turn skips spawn and load, in ms (0: closed at once).",
      ),
    maxWarmAgents: z
      .number()
      .int()
      .min(0)
      .max(64)
      .default(4)
      .describe('Agents kept warm at most; the least recently used is closed first.'),
    maxWarmMemoryMb: z
      .number()
      .int()
      .min(1)
      .default(2048)
      .describe('Resident memory of the warm agents together at most, in MB; the least recently used is closed first.'),
    prewarm: z
      .number()
      .int()
      .min(0)
      .max(8)
      .default(0)
      .describe(
        'Agents kept started and negotiated ahead of the next new session like the most recent one (same adapter, workspace and settings; no worktree, title or labels), so that its `run` skips spawn and handshake; each one not used within keepWarmMs is closed (0: none).',
      ),
    fleetMaxConcurrentRuns: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Fleet (serve --worker): turns running at once across all workers of the database (default: no fleet-wide limit).'),
    workerLeaseMs: z
      .number()
      .int()
      .min(1000)
      .default(15_000)
      .describe(
        "Fleet (serve --worker): how long a worker's lease lasts without a heartbeat, in ms; a worker silent this long is lost and its live turns are recorded unknown.",
      ),
  })
  .prefault({})
  .describe('Admission and timing limits.');

export const SandboxSchema = z
  .enum(['none', 'bwrap'])
  .default('none')
  .describe('OS-level confinement around each agent process: none, or bubblewrap.');

/**
 * The `policy` key that `createConfigSchema` adds to every adapter block: the permission policy
 * (allow / deny command prefixes, denied paths, extra write roots) of that adapter's sessions.
 * Optional: an absent block means the empty policy (`PermissionPolicySchema.parse({})`).
 */
export const AdapterPolicySchema = PermissionPolicySchema.optional().describe(
  "Permission policy of this adapter's sessions: allow / deny command prefixes, denyPaths, writeBoundary.",
);

/** Adapter name → the zod schema of its YAML block under `adapters:`. */
export type AdapterSchemas = Record<string, z.ZodType>;

/** An adapter's block schema as the config sees it: its object schema (a lazy one's, built) plus `policy`. */
export type AdapterBlockSchema<S extends z.ZodType> =
  S extends z.ZodLazy<infer Built extends z.ZodType>
    ? AdapterBlockSchema<Built>
    : S extends z.ZodObject<infer Shape, infer Config>
      ? z.ZodObject<Shape & { policy: typeof AdapterPolicySchema }, Config>
      : S;

type AdapterBlocksShape<A extends AdapterSchemas> = { [K in keyof A]: z.ZodPrefault<z.ZodLazy<AdapterBlockSchema<A[K]>>> };

/** The shape of the object `createConfigSchema` returns. */
export type ConfigShape<A extends AdapterSchemas> = {
  state: typeof StateSchema;
  cache: typeof CacheSchema;
  workspaces: typeof WorkspacesSchema;
  orchestrator: typeof OrchestratorSchema;
  sandbox: typeof SandboxSchema;
  defaults: z.ZodPrefault<z.ZodObject<{ adapter: z.ZodOptional<z.ZodType<string>> }, z.core.$strict>>;
  adapters: z.ZodPrefault<z.ZodObject<AdapterBlocksShape<A>, z.core.$strict>>;
};

/** The schema of a whole `one-works.yaml` for a given set of adapters. */
export type ConfigSchema<A extends AdapterSchemas = AdapterSchemas> = z.ZodObject<ConfigShape<A>, z.core.$strict>;

/** A parsed configuration as the schema produces it (directories may still be unset). */
export type ParsedConfig<A extends AdapterSchemas = AdapterSchemas> = z.output<ConfigSchema<A>>;

/** A configuration after `loadConfig`: the environment-dependent directory defaults are filled. */
export type OneWorksConfig<A extends AdapterSchemas = AdapterSchemas> = ParsedConfig<A> & {
  state: { directory: string };
  cache: { directory: string };
};

/**
 * The schema of one adapter's block: the adapter's own object schema extended with the optional
 * `policy` key, so adapters never import core/permissions. Use it wherever a parsed block is
 * validated again (e.g. after merging command-line flags into it). Throws
 * OneWorksError('internal') when the adapter's schema is not a zod object or declares `policy`
 * itself: both are bugs of the adapter, not of the user's file.
 */
export function adapterBlockSchema<S extends z.ZodType>(name: string, schema: S): AdapterBlockSchema<S> {
  // A lazy schema (core/lazy-schema.ts) is extended as the object it builds.
  const object = schema instanceof z.ZodLazy ? (schema._zod.innerType as z.ZodType) : schema;
  if (!(object instanceof z.ZodObject)) {
    throw new OneWorksError('internal', `adapter ${name}: its config schema must be a zod object (to accept the policy key)`);
  }
  if ('policy' in object.shape) {
    throw new OneWorksError('internal', `adapter ${name}: its config schema must not declare "policy"; core/config adds it`);
  }
  return object.extend({ policy: AdapterPolicySchema }) as unknown as AdapterBlockSchema<S>;
}

/**
 * Builds the `one-works.yaml` schema. Each adapter's block under `adapters:` is optional and
 * defaults to what its schema produces for `{}`, so every adapter schema must accept `{}`; every
 * block also accepts `policy` (see `adapterBlockSchema`). Unknown adapter names are rejected like
 * any unknown key. A block's schema is built on first use (adapter schemas may be lazy too), and
 * `loadConfig` uses only those of the blocks a file names (see `configSchemaFor`).
 */
export function createConfigSchema<A extends AdapterSchemas>(adapterSchemas: A): ConfigSchema<A> {
  const blocks = Object.fromEntries(
    Object.entries(adapterSchemas).map(([name, schema]) => {
      // A schema built already is checked at once (a lazy one when it is built): a wrong one is the adapter's bug.
      const block = schema instanceof z.ZodLazy ? undefined : adapterBlockSchema(name, schema);
      return [name, lazySchema(() => block ?? adapterBlockSchema(name, schema)).prefault({} as never)];
    }),
  ) as AdapterBlocksShape<A>;
  const schema = z.strictObject({
    state: StateSchema,
    cache: CacheSchema,
    workspaces: WorkspacesSchema,
    orchestrator: OrchestratorSchema,
    sandbox: SandboxSchema,
    defaults: z
      .strictObject({
        adapter: defaultAdapterSchema(Object.keys(adapterSchemas))
          .optional()
          .describe(
            `The adapter of run, submit, models and create_session when none is named (default: ${DEFAULT_ADAPTER}); a named instance of one is <adapter>:<name> (process:<harness>).`,
          ),
      })
      .prefault({})
      .describe('Defaults of commands and tools.'),
    adapters: z
      .strictObject(blocks)
      .prefault({} as never)
      .describe('One block per adapter.'),
  });
  ADAPTER_BLOCKS.set(schema, blocks);
  return schema;
}

// The adapter blocks of each schema createConfigSchema made, by adapter name.
const ADAPTER_BLOCKS = new WeakMap<z.ZodType, Record<string, z.ZodType>>();

/** How `loadConfig` parses one input: the schema to parse it with, and the adapter blocks it leaves out. */
export interface ConfigView {
  schema: z.ZodType;
  /** Adapter blocks the input does not name, by name: each is what its schema gives for nothing (`{}`). */
  absentBlocks: ReadonlyMap<string, z.ZodType>;
  /** Adapter blocks the input names that are parsed when first read (`deferrable`), by name: the view's schema takes any value for them. */
  deferredBlocks: ReadonlyMap<string, z.ZodType>;
  /** Every adapter block's name, in the schema's order (the order of a whole parse's keys). */
  adapterNames: readonly string[];
}

/**
 * The schema that parses `input` as `schema` does, without the blocks of the adapters `input` does
 * not name: building every adapter's schema to fill in their defaults is most of a short command's
 * configuration cost, and most commands never read them. The caller fills each left-out block
 * from `absentBlocks` when it is first read; it parses `{}` there, which every adapter schema must
 * accept. A failed parse must be repeated with `schema` itself, whose messages know every block.
 * The blocks `input` names whose names are in `deferrable` are left out the same way (the
 * view's schema takes any value for them): the caller parses each when first read.
 * For a schema that createConfigSchema did not make, or input without an `adapters` mapping, the
 * view is `schema` whole.
 */
export function configSchemaFor(schema: z.ZodType, input: unknown, deferrable: ReadonlySet<string> = new Set()): ConfigView {
  const blocks = ADAPTER_BLOCKS.get(schema);
  const adapters = isPlainObject(input) ? (input.adapters === undefined ? {} : input.adapters) : undefined;
  if (!blocks || !(schema instanceof z.ZodObject) || !isPlainObject(adapters)) {
    return { schema, absentBlocks: new Map(), deferredBlocks: new Map(), adapterNames: [] };
  }
  const named = Object.entries(blocks).filter(([name]) => Object.hasOwn(adapters, name));
  const deferredBlocks = new Map(named.filter(([name]) => deferrable.has(name)));
  const absentBlocks = new Map(Object.entries(blocks).filter(([name]) => !Object.hasOwn(adapters, name)));
  const adapterSchema = z
    .strictObject(Object.fromEntries(named.map(([name, block]) => [name, deferredBlocks.has(name) ? z.unknown() : block])))
    .prefault({});
  return { schema: schema.extend({ adapters: adapterSchema }), absentBlocks, deferredBlocks, adapterNames: Object.keys(blocks) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The adapter of commands and tools that name none, when `defaults.adapter` is unset. */
export const DEFAULT_ADAPTER = 'droid';

// An adapter name, or `<adapter>:<name>` for a named instance an adapter declares (process:<harness>).
function defaultAdapterSchema(names: string[]): z.ZodType<string> {
  return z
    .string()
    .refine((value) => names.includes(value) || names.some((name) => value.startsWith(`${name}:`) && value.length > name.length + 1), {
      message: `expected one of ${names.join(', ')} (or <adapter>:<name>)`,
    });
}
