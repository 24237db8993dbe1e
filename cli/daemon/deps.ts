import type { Autonomy, ResolvedCli } from '../../core/adapter.js';
import { loadCatalog, loadTurnCatalog, readCatalogEntry, TURN_CATALOG_STALE_MS } from '../../core/catalog/index.js';
import { fileIdentity } from '../../core/install/version-stamp.js';
import { declineEscalator } from '../../core/permissions/index.js';
import type { OrchestratorDeps } from '../../core/orchestrator/index.js';
import type { SessionRuntime } from '../../core/session/index.js';
import type { Store } from '../../core/store/index.js';
import type { IsolationDefaults } from '../../core/workspace/index.js';
import { configSecrets } from '../config-secrets.js';
import type { CliContext } from '../context.js';
import type { Output } from '../output.js';
import { createDecider, limitationNotes } from '../permissions.js';
import type { EscalationRouter } from './escalations.js';

interface AdapterBlock {
  autonomy: Autonomy;
  model?: string;
  effort?: string;
  interruptGraceMs?: number;
  drainFallbackMs?: number;
}

/** The orchestrator deps of `serve`, with the preparation of an adapter in idle time. */
export interface ServerDeps extends OrchestratorDeps {
  /**
   * Does in idle time what the first session of `adapterName` would otherwise do on its way to
   * the agent's spawn (serve calls it for the default adapter once it listens): loads the
   * adapter's code, prepares its CLI when that needs neither an install nor a `--version` run (a
   * version this machine recorded for the same file), and reads its catalog entry from the
   * cache. Starts no process, downloads and lists nothing, never rejects. Sessions still check
   * at use: the CLI prepared here serves them only while its binary is the same file, and the
   * catalog is read again for each turn.
   */
  warmAdapter(adapterName: string): Promise<void>;
}

// One adapter's CLI preparation, with the identity of the binary it resolved (core/install/version-stamp.ts).
interface PreparedCli {
  cli: Promise<ResolvedCli>;
  identity: Promise<string | undefined>;
  /** Made in idle time (no install, no `--version` run): a session that finds it failed prepares again. */
  idle: boolean;
}

/**
 * The orchestrator deps of `one-works serve`, from the CLI context: limits and approved roots
 * from the config, adapter defaults from `adapters.<name>`, and per-session runtimes assembled
 * like `run` does (the adapter's CLI prepared once per adapter and reused). Permission asks
 * that a policy does not decide go to the client attached to the session through
 * `escalations` (a `run` on a terminal), else they are declined (a server has no terminal);
 * the session's record policy is merged by the decider. `modelsFor` is the adapter's catalog
 * as `one-works models` lists it (cached for a minute under `<cache>/catalog/`, a cold cache
 * lists it once in a throwaway sandbox), which acceptance checks turn settings against.
 */
export function serverDeps(ctx: CliContext, store: Store, out: Output, escalations?: EscalationRouter): ServerDeps {
  // Every secret of the config, for the redactor of every session and catalog listing, known before any child starts.
  const secrets = configSecrets(ctx);
  const prepared = new Map<string, PreparedCli>();
  // The adapter's block (adapterConfig throws `usage` for an adapter the config does not know):
  // no adapter code is needed for it.
  const block = (adapter: string): AdapterBlock => ctx.adapterConfig(adapter) as AdapterBlock;
  // Starts preparing the adapter's CLI and keeps it for later sessions (a failed one is forgotten).
  const prepare = (adapterName: string, idle: boolean): PreparedCli => {
    const adapterConfig = block(adapterName);
    const cli = (async () =>
      (await ctx.loadAdapter(adapterName)).prepare(adapterConfig, {
        services: ctx.services,
        cacheDir: ctx.cacheDir,
        lock: await ctx.lockEntries(adapterName),
        onProgress: () => undefined,
        reuseVersionCheck: true,
        ...(idle ? { install: false, versionCheck: false } : {}),
      }))();
    const entry: PreparedCli = {
      cli,
      identity: cli.then(
        (resolved) => fileIdentity(resolved.binaryPath),
        () => undefined,
      ),
      idle,
    };
    prepared.set(adapterName, entry);
    cli.catch(() => {
      if (prepared.get(adapterName) === entry) prepared.delete(adapterName);
    });
    return entry;
  };
  // The adapter's CLI for a session: prepared once per adapter and reused while its binary is the
  // same file (device, inode, size, times); a replaced binary, a failed preparation, and one made
  // in idle time that could not finish (not installed, version not recorded) are prepared again.
  const cliOf = async (adapterName: string): Promise<ResolvedCli> => {
    const known = prepared.get(adapterName);
    if (known) {
      const cli = await known.cli.catch((error: unknown) => {
        if (!known.idle) throw error;
        return undefined;
      });
      if (cli) {
        const [now, then] = await Promise.all([fileIdentity(cli.binaryPath), known.identity]);
        if (now !== undefined && now === then) return cli;
      }
      if (prepared.get(adapterName) === known) prepared.delete(adapterName);
    }
    const next = prepared.get(adapterName);
    return (next && !next.idle ? next : prepare(adapterName, false)).cli;
  };
  const { orchestrator } = ctx.config;
  return {
    warmAdapter: async (adapterName) => {
      try {
        const adapter = await ctx.loadAdapter(adapterName);
        const cli = await (prepared.get(adapterName) ?? prepare(adapterName, true)).cli;
        if (adapter.catalog) await readCatalogEntry({ adapter, config: block(adapterName), cli, cacheDir: ctx.cacheDir, secrets });
      } catch {
        // Nothing is lost: the first session prepares what could not be prepared here, and reports its errors.
      }
    },
    store,
    stateDir: ctx.stateDir,
    limits: {
      maxConcurrentRuns: orchestrator.maxConcurrentRuns,
      maxQueuedTotal: orchestrator.maxQueuedTotal,
      maxQueuedPerSession: orchestrator.maxQueuedPerSession,
      cancelGraceMs: orchestrator.cancelGraceMs,
      runTimeoutMs: orchestrator.runTimeoutMs,
      keepWarmMs: orchestrator.keepWarmMs,
      maxWarmAgents: orchestrator.maxWarmAgents,
      maxWarmMemoryBytes: orchestrator.maxWarmMemoryMb * 2 ** 20,
      prewarm: orchestrator.prewarm,
    },
    log: (message) => out.info(message),
    approvedRoots: ctx.approvedRoots,
    approvalSource: { configKey: 'workspaces.approved', ...(ctx.configPath ? { configPath: ctx.configPath } : {}) },
    secrets,
    worktrees: { parentEnv: ctx.env, hooks: ctx.config.workspaces.gitHooks, sandbox: ctx.config.sandbox },
    isolation: isolationDefaults(ctx),
    defaultsFor: (adapter) => {
      const cfg = block(adapter);
      return {
        model: cfg.model,
        effort: cfg.effort,
        autonomy: cfg.autonomy,
        effortExplicit: ctx.explicitKeys.has(`adapters.${adapter}.effort`),
      };
    },
    adapterNames: () => ctx.enabledAdapters(),
    defaultAdapter: ctx.defaultAdapter,
    importerFor: async (adapterName) => {
      block(adapterName);
      return (await ctx.loadAdapter(adapterName)).importer;
    },
    forkerFor: async (adapterName) => {
      block(adapterName);
      return (await ctx.loadAdapter(adapterName)).forker;
    },
    // The catalog as `models` and run's model check see it: cached for a minute under <cache>/catalog/.
    // The check before a turn (`degraded` given) accepts a stale or no catalog when the CLI cannot start and the adapter goes on without it;
    // with `stale`, an entry up to TURN_CATALOG_STALE_MS past its minute, whose listing the caller runs before it refuses.
    modelsFor: async (adapterName, options) => {
      const adapter = await ctx.loadAdapter(adapterName);
      if (!adapter.catalog) return undefined;
      const load = { adapter, config: block(adapterName), cli: await cliOf(adapterName), cacheDir: ctx.cacheDir, secrets };
      if (!options?.degraded) return (await loadCatalog(load)).value.models;
      const { degraded, stale } = options;
      const turn = await loadTurnCatalog(load, stale ? { allowStaleMs: TURN_CATALOG_STALE_MS } : {});
      if (turn.note !== undefined) degraded(turn.note);
      const { refresh } = turn;
      if (refresh && stale) {
        stale(async () => {
          const fresh = await refresh();
          if (fresh.note !== undefined) degraded(fresh.note);
          return fresh.catalog?.models;
        });
      }
      return turn.catalog?.models;
    },
    // An advisory catalog (declared not authoritative) never refuses a model: it adds a note.
    catalogIsAdvisory: async (adapterName) => (await ctx.loadAdapter(adapterName)).capabilities?.authoritativeCatalog === false,
    runtimeFor: async (adapterName, session): Promise<SessionRuntime> => {
      // The adapter's code loads with its first session (or prewarmed agent), not at start.
      const adapter = await ctx.loadAdapter(adapterName);
      const adapterConfig = block(adapterName);
      const cli = cliOf(adapterName);
      let liveRun: string | undefined;
      const decide = createDecider(
        ctx,
        adapterConfig,
        out,
        escalations
          ? {
              escalator: escalations.escalatorFor(session.id, () => liveRun),
              quiet: (decided) => escalations.takeAbandoned(decided.ask.requestId),
            }
          : { escalator: declineEscalator },
      );
      return {
        store,
        stateDir: ctx.stateDir,
        adapter,
        adapterConfig,
        cli: await cli,
        secrets,
        limitationNotes: (record, autonomy) => limitationNotes(adapter, adapterConfig, [record.policy], autonomy),
        decide: (ask, record) => {
          // The runner's record ends with its live run: the one whose follower is asked.
          liveRun = record.runs.at(-1)?.id;
          return decide(ask, record);
        },
        interruptGraceMs: adapterConfig.interruptGraceMs ?? orchestrator.cancelGraceMs,
        stopGraceMs: orchestrator.cancelGraceMs,
        sandbox: ctx.config.sandbox,
        ...(adapterConfig.drainFallbackMs === undefined ? {} : { drainFallbackMs: adapterConfig.drainFallbackMs }),
        runTimeoutMs: orchestrator.runTimeoutMs,
      };
    },
  };
}

// `workspaces.isolation` and the approved roots that set their own (none without a config file).
function isolationDefaults(ctx: CliContext): IsolationDefaults {
  const roots = ctx.implicitApproval
    ? []
    : ctx.config.workspaces.approved.flatMap((entry) =>
        typeof entry !== 'string' && entry.isolation !== undefined ? [{ path: entry.path, isolation: entry.isolation }] : [],
      );
  return { isolation: ctx.config.workspaces.isolation, roots };
}
