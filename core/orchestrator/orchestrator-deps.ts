import { z } from 'zod';
import type { Autonomy, NativeForker, SessionImporter } from '../adapter.js';
import type { CatalogModel } from '../catalog/index.js';
import type { AskBoard } from '../permissions/index.js';
import type { SessionRuntime } from '../session/index.js';
import type { SessionRecord, Store } from '../store/index.js';
import type { ApprovalSource, IsolationDefaults } from '../workspace/index.js';
import { AdmissionLimitsSchema } from './admission.js';
import type { TurnSettings } from './types.js';

/** The `orchestrator:` block of one-works.yaml that the orchestrator enforces. */
export const OrchestratorLimitsSchema = AdmissionLimitsSchema.extend({
  /** Wait after a protocol interrupt before the child is killed, in ms. */
  cancelGraceMs: z.number().int().min(0),
  /** Longest a single turn may run, in ms; then it is cancelled and fails with `run_timeout`. */
  runTimeoutMs: z.number().int().positive(),
  /** How long an agent stays warm after its turn for the session's next one, in ms (default 0: closed at once). */
  keepWarmMs: z.number().int().min(0).optional(),
  /** Warm agents at most (default 4); the least recently used is closed first. */
  maxWarmAgents: z.number().int().min(0).optional(),
  /** Resident memory of the warm agents together at most, in bytes (default: no budget). */
  maxWarmMemoryBytes: z.number().int().positive().optional(),
  /** Agents kept started ahead of new sessions like the most recent one (default 0); each waits keepWarmMs. */
  prewarm: z.number().int().min(0).max(8).optional(),
});
export type OrchestratorLimits = z.infer<typeof OrchestratorLimitsSchema>;

/**
 * The settings a new session of an adapter starts with when the request leaves them out.
 * `effortExplicit`: the user wrote `effort` in the config (not a schema default), so dropping it
 * for a model without effort levels earns the same note as an asked one.
 */
export type AdapterDefaults = TurnSettings & { autonomy: Autonomy; effortExplicit?: boolean | undefined };

/**
 * What an orchestrator needs from its host (the CLI's `serve`, or a test). The orchestrator
 * never names an adapter: it only passes adapter names to these callbacks.
 */
export interface OrchestratorDeps {
  /** The store of `stateDir`, owned by this process (acquireOwner done by the caller). */
  store: Store;
  /**
   * The sessions start-up recovery may touch (a fleet worker: those whose HOME it holds, since
   * the other workers' turns are alive); absent: every session (the single owner's).
   */
  recoveryScope?: readonly string[] | undefined;
  stateDir: string;
  limits: OrchestratorLimits;
  /** `workspaces.approved`: every session's workspace must lie inside one of them. */
  approvedRoots: readonly string[];
  /** Named in `workspace_not_approved` errors. */
  approvalSource?: ApprovalSource | undefined;
  /**
   * Defaults of an adapter (its YAML block's model, effort, autonomy). Throws OneWorksError
   * `usage` for an adapter that is not configured: createSession then records nothing.
   */
  defaultsFor(adapter: string): AdapterDefaults;
  /** The configured adapters' names, for `info()` (default: none listed). */
  adapterNames?(): string[];
  /** The adapter a client that names none gets (the host's `defaults.adapter`), for `info()`; absent: none. */
  defaultAdapter?: string | undefined;
  /**
   * The live catalog's models of an adapter (TTL-cached by the host), which acceptance checks
   * models and efforts against and takes default efforts from. Resolves `undefined` when the
   * adapter has no catalog (then nothing is checked); rejects with the listing's OneWorksError.
   * Called only for turns that name a model other than `inherit` (explicitly or by default).
   * Without it, nothing is checked and `models()` fails with `usage`. With `degraded` (the
   * check before a turn passes it), a listing that fails because the CLI cannot start, for an
   * adapter whose turns go on without it (droid with `fallback: oneshot`), resolves the last
   * known models (however old) or undefined (nothing checked) and calls `degraded` with a note
   * saying which and why (core/catalog `loadTurnCatalog`); the turn gets it as a warning.
   */
  modelsFor?(adapter: string, options?: ModelsForOptions): Promise<CatalogModel[] | undefined>;
  /**
   * True when an adapter's catalog is advisory (it declares it not authoritative: a CLI with no
   * list call): a model it does not list is then passed through with a note (a `log` warning of
   * the turn), never refused with `model_unavailable`. Default: every catalog is authoritative.
   */
  catalogIsAdvisory?(adapter: string): boolean | Promise<boolean>;
  /** Longest the orchestrator waits for `modelsFor`, in ms (default 60 s); then `catalog_unavailable`. */
  catalogDeadlineMs?: number | undefined;
  /**
   * The runtime a session's runner uses (prepared CLI, config, secrets, permission decider).
   * Called whenever a runner is opened, i.e. when a session becomes busy. The orchestrator
   * replaces its `store` and sets `runTimeoutMs` and `interruptGraceMs` from `limits`.
   */
  runtimeFor(adapter: string, session: SessionRecord): Promise<SessionRuntime>;
  /** The adapter's reader of its CLI's own session records, for `importSession`; undefined when it has none. */
  importerFor?(adapter: string): SessionImporter | undefined | Promise<SessionImporter | undefined>;
  /** The adapter's native fork (from a checkpoint), for `forkSession`; undefined: forks carry a transcript. */
  forkerFor?(adapter: string): NativeForker | undefined | Promise<NativeForker | undefined>;
  /** Secrets redacted from queued prompts and the orchestrator's own events. */
  secrets?: readonly string[] | undefined;
  /**
   * Worktree sessions: the environment git and checks pick their allowlist from (default
   * `process.env`), whether the repository's hooks run (default no), and the sandbox checks run
   * under (the config's `sandbox`, default none).
   */
  worktrees?: { parentEnv?: NodeJS.ProcessEnv; hooks?: boolean; sandbox?: 'none' | 'bwrap' } | undefined;
  /**
   * The isolation of a new session whose request leaves `worktree` out: `workspaces.isolation`
   * and the approved roots that set their own (default: none, the workspace itself).
   */
  isolation?: IsolationDefaults | undefined;
  /**
   * Where escalated asks wait for an answer (the host wires its runners' escalators to it);
   * `listAsks` and `answerAsk` serve it. Without it there are no open asks.
   */
  asks?: AskBoard | undefined;
  /** Where the orchestrator records what happens outside any session (prewarmed agents started and closed). */
  log?: ((message: string) => void) | undefined;
  /** How long an agent started for an intent waits for its createSession, in ms (default INTENT_WINDOW_MS; tests shorten it). */
  intentWindowMs?: number | undefined;
  /** How long recovery waits for the intent's agent to spawn (startOrchestrator), in ms (default INTENT_HEAD_START_MS; tests shorten it). */
  intentHeadStartMs?: number | undefined;
  /** Resident memory of an agent process tree, for `maxWarmMemoryBytes` (default: read from /proc). */
  measureRss?: ((pid: number) => Promise<number | undefined>) | undefined;
}

/** Options of {@link OrchestratorDeps.modelsFor}. */
export interface ModelsForOptions {
  /** Accepts a stale or missing catalog when the CLI cannot start (see modelsFor); receives the note. */
  degraded?: (note: string) => void;
  /**
   * Accepts models from a catalog past its freshness (within the host's bound, core/catalog
   * TURN_CATALOG_STALE_MS) without waiting for a new listing: the host then calls `stale` with
   * the listing, which the caller runs (it joins one in progress) before refusing a model or
   * effort the stale models do not allow. Its notes go to `degraded`.
   */
  stale?: (refresh: () => Promise<CatalogModel[] | undefined>) => void;
}
