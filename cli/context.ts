import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Adapter, PrepareServices, ProgressReport } from '../core/adapter.js';
import { createPrepareServices } from '../core/install/services.js';
import { approvedRootPath, collectSecrets, createConfigSchema, loadConfig, readLock } from '../core/config/index.js';
import { OneWorksError } from '../core/errors.js';
import { claudeCodeAdapter } from '../adapters/claude-code/index.js';
import { codexAdapter } from '../adapters/codex/index.js';
import {
  AcpConfigSchema,
  acpAgentName,
  acpCommandAdapter,
  DroidAcpBlockSchema,
  droidAcpAdapter,
  geminiAdapter,
} from '../adapters/acp/index.js';
import { droidAdapter } from '../adapters/droid/index.js';
import type { GlobalOptions } from './main.js';
import { Output, processRedactor } from './output.js';
import { createProgressRenderer } from './progress.js';

/** The one place where adapters are wired into the runtime: a plain map. */
// biome-ignore lint/suspicious/noExplicitAny: adapters of different config types share one map; each parses its own block
export const ADAPTERS: Record<string, Adapter<any>> = {
  droid: droidAdapter,
  'claude-code': claudeCodeAdapter,
  codex: codexAdapter,
  'droid-acp': droidAcpAdapter,
  gemini: geminiAdapter,
};

/**
 * Adapters that run another adapter's CLI the same way and read that adapter's block: their own
 * YAML block holds only `enabled` (and `policy`); `adapterConfig` hands them the other block,
 * enabled, with their own policy when they have one.
 */
const DERIVED_BLOCKS: Record<string, { from: string; schema: (typeof ADAPTERS)[string]['configSchema'] }> = {
  'droid-acp': { from: 'droid', schema: DroidAcpBlockSchema },
};

/**
 * `adapters.acp` declares ACP agents by command; each runs as the adapter `acp:<name>` (see
 * resolveAdapter), there is no adapter called `acp` itself.
 */
const ACP_BLOCK = 'acp';

export const CONFIG_SCHEMA = createConfigSchema({
  ...Object.fromEntries(Object.entries(ADAPTERS).map(([name, adapter]) => [name, DERIVED_BLOCKS[name]?.schema ?? adapter.configSchema])),
  [ACP_BLOCK]: AcpConfigSchema,
});

const commandAdapters = new Map<string, Adapter<unknown>>();

/** An adapter by name: one of ADAPTERS, or `acp:<name>` for an ACP agent declared by command. */
// biome-ignore lint/suspicious/noExplicitAny: see ADAPTERS
export function resolveAdapter(name: string): Adapter<any> | undefined {
  if (ADAPTERS[name]) return ADAPTERS[name];
  const agent = acpAgentName(name);
  if (agent === undefined) return undefined;
  let adapter = commandAdapters.get(agent);
  if (!adapter) {
    adapter = acpCommandAdapter(agent) as Adapter<unknown>;
    commandAdapters.set(agent, adapter);
  }
  return adapter;
}

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
  // biome-ignore lint/suspicious/noExplicitAny: see ADAPTERS
  adapter(name: string): Adapter<any>;
  /** The adapter's parsed block; throws `usage` when the config does not enable it (`enabled: false`). */
  adapterConfig(name: string): unknown;
  /** The adapters the config enables (a block without `enabled` counts as enabled: droid's). */
  enabledAdapters(): string[];
  /** `defaults.adapter`, else droid. */
  defaultAdapter: string;
  lockEntries(name: string): Promise<Map<string, { protocolVersion: string; apiVersion: string; integrity?: string }>>;
  /** The runtime services adapters resolve their CLIs with. */
  services: PrepareServices;
  /** Renders install progress on a TTY; silent in --json mode or without a TTY. */
  progress: (report: ProgressReport) => void;
}

export async function createContext(globals: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<CliContext> {
  const cwd = process.cwd();
  const out = new Output({ json: Boolean(globals.json) });
  const loaded = await loadConfig({ schema: CONFIG_SCHEMA, ...(globals.config ? { path: resolve(globals.config) } : {}), cwd, env });
  const config = loaded.config as OneWorksConfig;
  for (const secret of collectSecrets(CONFIG_SCHEMA, config)) processRedactor.register(secret);
  const xdgState = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  const xdgCache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const stateDir = config.state?.directory ?? join(xdgState, 'one-works');
  const cacheDir = config.cache?.directory ?? join(xdgCache, 'one-works');
  const implicitApproval = loaded.path === undefined;
  const approvedRoots = implicitApproval ? [cwd] : config.workspaces.approved.map(approvedRootPath);
  const lockPath = join(loaded.path ? dirname(loaded.path) : cwd, 'one-works.lock');
  return {
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
      const adapter = resolveAdapter(name);
      if (!adapter) {
        throw new OneWorksError(
          'usage',
          `unknown adapter "${name}"; known adapters: ${[...Object.keys(ADAPTERS), 'acp:<name>'].join(', ')}`,
        );
      }
      return adapter;
    },
    adapterConfig(name) {
      if (!resolveAdapter(name))
        throw new OneWorksError(
          'usage',
          `unknown adapter "${name}"; known adapters: ${[...Object.keys(ADAPTERS), 'acp:<name>'].join(', ')}`,
        );
      const blocks = config.adapters as Record<string, Record<string, unknown> | undefined>;
      const agent = acpAgentName(name);
      if (agent !== undefined) {
        const acp = blocks[ACP_BLOCK] as { enabled?: boolean; agents?: Record<string, unknown> } | undefined;
        if (acp?.enabled !== true || !acp.agents?.[agent]) {
          throw new OneWorksError(
            'usage',
            `adapter "${name}" is not configured; declare adapters.acp.agents.${agent} and set adapters.acp.enabled: true in ${loaded.path ?? 'one-works.yaml'}`,
          );
        }
        return acp;
      }
      const block = blocks[name];
      if (!isEnabled(block)) {
        throw new OneWorksError(
          'usage',
          `adapter "${name}" is not enabled; set adapters.${name}.enabled: true in ${loaded.path ?? 'one-works.yaml'} to use it`,
        );
      }
      const derived = DERIVED_BLOCKS[name];
      if (!derived) return block;
      const base = blocks[derived.from] ?? {};
      return { ...base, enabled: true, policy: block?.policy ?? base.policy };
    },
    enabledAdapters: () => {
      const blocks = config.adapters as Record<string, unknown>;
      const acp = blocks[ACP_BLOCK] as { enabled?: boolean; agents?: Record<string, unknown> } | undefined;
      const agents = acp?.enabled === true ? Object.keys(acp.agents ?? {}).map((agent) => `acp:${agent}`) : [];
      return [...Object.keys(ADAPTERS).filter((name) => isEnabled(blocks[name])), ...agents];
    },
    defaultAdapter: config.defaults.adapter ?? 'droid',
    async lockEntries(name) {
      const lock = await readLock(lockPath);
      return new Map(Object.entries(lock.adapters[name] ?? {}));
    },
    services: createPrepareServices(),
    progress: createProgressRenderer(out, { verbose: Boolean(globals.verbose) }),
  };
}

// A block with `enabled: false` (the default of adapters other than droid) is left alone entirely.
function isEnabled(block: unknown): boolean {
  return (block as { enabled?: unknown } | undefined)?.enabled !== false;
}
