import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Adapter, LockedVersion, PrepareServices, ProgressReport } from '../core/adapter.js';
import { createPrepareServices } from '../core/install/services.js';
// The config's own modules, not core/config/index.js: the lock (semver), the JSON Schema export and
// the YAML rewriter are loaded only by the commands that use them.
import { loadConfig } from '../core/config/load.js';
import type { SecretPath } from '../core/config/secret-paths.js';
import { approvedRootPath, createConfigSchema, DEFAULT_ADAPTER } from '../core/config/schema.js';
import { OneWorksError } from '../core/errors.js';
import { postgresUrlSecrets } from '../core/store/postgres-url.js';
import {
  ACP_SECRET_PATHS,
  AcpConfigSchema,
  acpAgentName,
  DroidAcpBlockSchema,
  GEMINI_CREDENTIALS,
  GEMINI_SECRET_PATHS,
  GeminiConfigSchema,
} from '../adapters/acp/config.js';
import { CLAUDE_CREDENTIALS, CLAUDE_SECRET_PATHS, ClaudeConfigSchema } from '../adapters/claude-code/config.js';
import { CODEX_CREDENTIALS, CODEX_SECRET_PATHS, CodexConfigSchema } from '../adapters/codex/config.js';
import { DROID_CREDENTIALS, DROID_SECRET_PATHS, DroidConfigSchema } from '../adapters/droid/config.js';
import { harnessName, PROCESS_SECRET_PATHS, type ProcessConfig, ProcessConfigSchema } from '../adapters/process-runner/config.js';
import type { GlobalOptions } from './main.js';
import { Output, processRedactor } from './output.js';
import { createProgressRenderer } from './progress.js';
import { viewCwd, viewEnv, viewStdio } from './process-view.js';

/**
 * The adapters' YAML blocks, by adapter name: the configuration needs only these. The adapters
 * themselves (cli/adapter-table.ts, each with the same `configSchema`) load with the commands
 * that use them.
 */
export const ADAPTER_CONFIG_SCHEMAS = {
  droid: DroidConfigSchema,
  'claude-code': ClaudeConfigSchema,
  codex: CodexConfigSchema,
  process: ProcessConfigSchema,
  'droid-acp': DroidAcpBlockSchema,
  gemini: GeminiConfigSchema,
  /** ACP agents declared by command; each runs as the adapter `acp:<name>` (there is no adapter `acp`). */
  acp: AcpConfigSchema,
};

/**
 * The `credentials` of the adapter blocks that have them, by block: variable name → what it is;
 * each defaults to the host variable of its name (core/config/adapter-fields.ts credentialsField).
 */
export const ADAPTER_CREDENTIALS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  droid: DROID_CREDENTIALS,
  'claude-code': CLAUDE_CREDENTIALS,
  codex: CODEX_CREDENTIALS,
  gemini: GEMINI_CREDENTIALS,
};

/**
 * Where each adapter block holds secrets, by block (each adapter's config module, next to its
 * schema): what a command that leaves the blocks unparsed registers (ContextOptions.adapterBlocks).
 * test/core/config/deferred-blocks.test.ts checks each against its schema.
 */
export const ADAPTER_SECRET_PATHS: Readonly<Record<keyof typeof ADAPTER_CONFIG_SCHEMAS, readonly SecretPath[]>> = {
  droid: DROID_SECRET_PATHS,
  'claude-code': CLAUDE_SECRET_PATHS,
  codex: CODEX_SECRET_PATHS,
  process: PROCESS_SECRET_PATHS,
  // Its own block holds `enabled` and `policy` only; it runs with the droid block's settings.
  'droid-acp': [],
  gemini: GEMINI_SECRET_PATHS,
  acp: ACP_SECRET_PATHS,
};

/** The names of the adapters in the tree (`acp` is a block of agents, each `acp:<name>`). */
export const ADAPTER_NAMES: readonly string[] = Object.keys(ADAPTER_CONFIG_SCHEMAS).filter((name) => name !== 'acp');

/**
 * Adapters that run another adapter's CLI the same way and read that adapter's block: their own
 * YAML block holds only `enabled` (and `policy`); `adapterConfig` hands them the other block,
 * enabled, with their own policy when they have one.
 */
const DERIVED_BLOCKS: Record<string, { from: string }> = { 'droid-acp': { from: 'droid' } };

export const CONFIG_SCHEMA = createConfigSchema(ADAPTER_CONFIG_SCHEMAS);

export type OneWorksConfig = ReturnType<(typeof CONFIG_SCHEMA)['parse']>;

/** What every command gets: the loaded config, resolved directories and an output. */
export interface CliContext {
  config: OneWorksConfig;
  /** The config file, when one was found. */
  configPath: string | undefined;
  /** Dotted key paths the config file sets itself (not filled by a default), e.g. `adapters.droid.effort`. */
  explicitKeys: ReadonlySet<string>;
  /** `one-works.lock` next to the config file (or in cwd without one). */
  lockPath: string;
  stateDir: string;
  cacheDir: string;
  /** Approved workspace roots; with no config file, the current directory alone. */
  approvedRoots: string[];
  /** True when no config file exists and the current directory was approved implicitly. */
  implicitApproval: boolean;
  out: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /**
   * The adapter of this name, loaded: by `createContext` for commands made with every adapter
   * (the default), else by an earlier {@link CliContext.loadAdapter} of the same name. Throws
   * `usage` for an adapter the config does not know.
   */
  // biome-ignore lint/suspicious/noExplicitAny: see ADAPTER_LOADERS
  adapter(name: string): Adapter<any>;
  /** The adapter of this name, its module imported on first use (`usage` for an unknown one). */
  // biome-ignore lint/suspicious/noExplicitAny: see ADAPTER_LOADERS
  loadAdapter(name: string): Promise<Adapter<any>>;
  /** The adapter's parsed block; throws `usage` when the config does not enable it (`enabled: false`). */
  adapterConfig(name: string): unknown;
  /** The adapters the config enables (a block without `enabled` counts as enabled: droid's). */
  enabledAdapters(): string[];
  /** `defaults.adapter`, else droid. */
  defaultAdapter: string;
  lockEntries(name: string): Promise<Map<string, LockedVersion>>;
  /** The runtime services adapters resolve their CLIs with. */
  services: PrepareServices;
  /** Renders install progress on a TTY; silent in --json mode or without a TTY. */
  progress: (report: ProgressReport) => void;
}

/** How a command's context is made. */
export interface ContextOptions {
  /**
   * Which adapters the command loads. `all` (the default): every adapter, at once, for commands
   * that look at all of them (`doctor`, `adapters`, …). `lazy`: each adapter when first asked for
   * with `ctx.loadAdapter` (`run` loads its session's adapter, the orchestrator those of its
   * sessions). `false`: none, for commands that only read the state and talk to the orchestrator.
   * Every adapter block the config names is validated at load (by the config schemas alone),
   * unless `adapterBlocks` says otherwise.
   */
  adapters?: 'all' | 'lazy' | false;
  /**
   * With `adapters: false`, `when-read`: each adapter block is validated when first read, its
   * secrets registered at load all the same (ADAPTER_SECRET_PATHS). For the commands that
   * only read the state and never start an orchestrator (`sessions`, `events`): they build no
   * adapter's schema, and do not stop at an adapter block that `run` would refuse. A command that
   * may start one (`submit`, `wait`, …) keeps `at-load` (the default): it refuses a bad block itself,
   * before any server starts.
   */
  adapterBlocks?: 'at-load' | 'when-read';
}

export async function createContext(
  globals: GlobalOptions,
  env: NodeJS.ProcessEnv = viewEnv(),
  options: ContextOptions = {},
): Promise<CliContext> {
  const mode = options.adapters ?? 'all';
  const tables = mode === 'all' ? await (await import('./adapter-table.js')).loadAllAdapters() : undefined;
  // The client's directory and streams when the orchestrator runs this command for it (cli/process-view.ts).
  const cwd = viewCwd();
  const { stdout, stderr } = viewStdio();
  const out = new Output({ json: Boolean(globals.json), stdout, stderr });
  // Every secret of the config is registered as it becomes known: an adapter block the file leaves
  // out is made (with its defaults from the environment) when first read.
  const loaded = await loadConfig({
    schema: CONFIG_SCHEMA,
    ...(globals.config ? { path: resolve(cwd, globals.config) } : {}),
    cwd,
    env,
    onSecrets: (secrets) => {
      for (const secret of secrets) processRedactor.register(secret);
    },
    // A state-only command reads no adapter block: the blocks are parsed (and an invalid one
    // refused) when first read, their secrets registered now all the same.
    ...(mode === false && options.adapterBlocks === 'when-read' ? { deferredBlocks: { secretPaths: ADAPTER_SECRET_PATHS } } : {}),
  });
  const config = loaded.config as OneWorksConfig;
  // The database URL is registered whole by collectSecrets; its password alone is a secret too.
  if (config.state?.postgres) for (const secret of postgresUrlSecrets(config.state.postgres.url)) processRedactor.register(secret);
  const xdgState = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  const xdgCache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const stateDir = config.state?.directory ?? join(xdgState, 'one-works');
  const cacheDir = config.cache?.directory ?? join(xdgCache, 'one-works');
  const implicitApproval = loaded.path === undefined;
  const approvedRoots = implicitApproval ? [cwd] : config.workspaces.approved.map(approvedRootPath);
  const lockPath = join(loaded.path ? dirname(loaded.path) : cwd, 'one-works.lock');
  const processBlock = (): ProcessConfig & { policy?: unknown } => (config.adapters as Record<string, unknown>).process as ProcessConfig;
  const acpBlock = (): { enabled?: boolean; agents?: Record<string, unknown> } | undefined =>
    (config.adapters as Record<string, unknown>).acp as { enabled?: boolean; agents?: Record<string, unknown> } | undefined;
  const knownAdapters = (): string[] => [
    ...ADAPTER_NAMES.filter((name) => name !== 'process'),
    ...Object.keys(processBlock().harnesses).map((h) => `process:${h}`),
    ...Object.keys(acpBlock()?.agents ?? {}).map((agent) => `acp:${agent}`),
  ];
  // A harness's block, with the process block's policy: its adapter config.
  const harnessBlock = (harness: string): unknown => {
    const block = processBlock();
    const entry = Object.hasOwn(block.harnesses, harness) ? block.harnesses[harness] : undefined;
    if (!entry) {
      const declared = Object.keys(block.harnesses);
      throw new OneWorksError(
        'usage',
        `unknown harness "${harness}": declare it under adapters.process.harnesses in ${loaded.path ?? 'one-works.yaml'}${declared.length > 0 ? ` (declared: ${declared.join(', ')})` : ''}`,
      );
    }
    if (!isEnabled(block)) {
      throw new OneWorksError(
        'usage',
        `adapter "process" is not enabled; set adapters.process.enabled: true in ${loaded.path ?? 'one-works.yaml'}`,
      );
    }
    return { ...entry, ...(block.policy === undefined ? {} : { policy: block.policy }) };
  };
  // The `adapters.acp` block for an agent declared in it (`acp:<name>`).
  const acpAgentBlock = (name: string, agent: string): unknown => {
    const acp = acpBlock();
    if (acp?.enabled !== true || !acp.agents?.[agent]) {
      throw new OneWorksError(
        'usage',
        `adapter "${name}" is not configured; declare adapters.acp.agents.${agent} and set adapters.acp.enabled: true in ${loaded.path ?? 'one-works.yaml'}`,
      );
    }
    return acp;
  };
  // Throws `usage` unless the config knows the adapter `name` (a harness or ACP agent must be declared).
  const checkName = (name: string): void => {
    const harness = harnessName(name);
    if (harness !== undefined) return void harnessBlock(harness);
    const agent = acpAgentName(name);
    if (agent !== undefined) return void acpAgentBlock(name, agent);
    assertKnown(name);
  };
  const loadedAdapters = new Map<string, Adapter<unknown>>();
  const assertKnown = (name: string): void => {
    if (!ADAPTER_NAMES.includes(name))
      throw new OneWorksError('usage', `unknown adapter "${name}"; known adapters: ${knownAdapters().join(', ')}`);
  };
  const ctx: CliContext = {
    config,
    configPath: loaded.path,
    explicitKeys: loaded.explicitKeys,
    lockPath,
    stateDir,
    cacheDir,
    approvedRoots,
    implicitApproval,
    out,
    env,
    cwd,
    adapter(name) {
      checkName(name);
      const known = loadedAdapters.get(name);
      if (known) return known;
      if (!tables) {
        throw new OneWorksError(
          'internal',
          mode === false
            ? `this command was started without its adapters but needs the ${name} adapter`
            : `the ${name} adapter is used before it was loaded (ctx.loadAdapter)`,
        );
      }
      const harness = harnessName(name);
      const agent = acpAgentName(name);
      const adapter =
        harness !== undefined
          ? tables.harnessAdapter(harness)
          : agent !== undefined
            ? tables.acpCommandAdapter(agent)
            : tables.adapters.get(name)!;
      loadedAdapters.set(name, adapter);
      return adapter;
    },
    async loadAdapter(name) {
      checkName(name);
      const known = loadedAdapters.get(name);
      if (known) return known;
      if (mode !== 'lazy') return ctx.adapter(name);
      const table = await import('./adapter-table.js');
      const harness = harnessName(name);
      const agent = acpAgentName(name);
      const adapter =
        harness !== undefined
          ? await table.loadHarnessAdapter(harness)
          : agent !== undefined
            ? await table.loadAcpCommandAdapter(agent)
            : await table.ADAPTER_LOADERS[name]!();
      // A concurrent load of the same name may have finished first: one adapter object per name.
      const first = loadedAdapters.get(name) ?? adapter;
      loadedAdapters.set(name, first);
      return first;
    },
    adapterConfig(name) {
      const harness = harnessName(name);
      if (harness !== undefined) return harnessBlock(harness);
      const agent = acpAgentName(name);
      if (agent !== undefined) return acpAgentBlock(name, agent);
      assertKnown(name);
      const block = (config.adapters as Record<string, unknown>)[name];
      if (!isEnabled(block)) {
        throw new OneWorksError(
          'usage',
          `adapter "${name}" is not enabled; set adapters.${name}.enabled: true in ${loaded.path ?? 'one-works.yaml'} to use it`,
        );
      }
      const derived = DERIVED_BLOCKS[name];
      if (!derived) return block;
      const blocks = config.adapters as Record<string, Record<string, unknown> | undefined>;
      const base = blocks[derived.from] ?? {};
      return { ...base, enabled: true, policy: (block as { policy?: unknown } | undefined)?.policy ?? base.policy };
    },
    // The process adapter is listed as its harnesses (`process:<name>`), each an adapter of its
    // own; the ACP agents declared by command as `acp:<name>`.
    enabledAdapters: () => {
      const agents = acpBlock()?.enabled === true ? Object.keys(acpBlock()?.agents ?? {}).map((agent) => `acp:${agent}`) : [];
      return [
        ...ADAPTER_NAMES.filter((name) => isEnabled((config.adapters as Record<string, unknown>)[name])).flatMap((name) =>
          name === 'process' ? Object.keys(processBlock().harnesses).map((h) => `process:${h}`) : [name],
        ),
        ...agents,
      ];
    },
    defaultAdapter: config.defaults.adapter ?? DEFAULT_ADAPTER,
    async lockEntries(name) {
      const { readLock } = await import('../core/config/lock.js');
      const lock = await readLock(lockPath);
      return new Map(Object.entries(lock.adapters[name] ?? {}));
    },
    services: createPrepareServices(),
    progress: createProgressRenderer(out, { verbose: Boolean(globals.verbose) }, stderr),
  };
  return ctx;
}

// A block with `enabled: false` (the default of adapters other than droid) is left alone entirely.
function isEnabled(block: unknown): boolean {
  return (block as { enabled?: unknown } | undefined)?.enabled !== false;
}
