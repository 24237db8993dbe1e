import type { z } from 'zod';
import type { Catalog, CatalogRequest } from './catalog/schema.js';
import type { AnswerChannel, EventDraft, TurnOutcome } from './events/index.js';
import type { OneWorksError } from './errors.js';
import type { FetchOptions, InstalledPackage, InstallPackageOptions, ReadNpmConfigOptions, RegistryConfig } from './install/index.js';
import type { RunCommandOptions, RunCommandResult } from './process/run-command.js';
import type { Redactor } from './redact.js';
import type { Transport } from './transport/transport.js';

/**
 * The Adapter contract. An adapter translates one coding-agent CLI's native protocol into One
 * Works events. It never spawns: it describes a launch and asks the session layer (through
 * `SessionIO.launch`) to start it, then drives the child over the transport it gets back.
 */

/** Version of this contract; bumped on breaking changes (cf. vercel/ai `specificationVersion`). */
export const ADAPTER_CONTRACT_VERSION = 4 as const;

export type Autonomy = 'off' | 'low' | 'medium' | 'high';

/** Where the CLI binary came from. */
export type CliSource = 'managed' | 'system' | 'path';

/**
 * Version facts of a CLI: what the adapter's qualified-version table (or the project's lock
 * file, after an upgrade probe) records for a version, and what a probe reads off the running
 * CLI. Each adapter defines its keys (droid: `apiVersion` and `protocolVersion`; Claude Code: the
 * `claudeCodeVersion` it announces) and checks them itself (`Adapter.checkVersionFacts`). A
 * running session reports the same record (`AdapterSession.info.versionFacts`, `session.started`).
 */
export type VersionFacts = Readonly<Record<string, string>>;

/** A resolved and verified CLI binary. */
export interface ResolvedCli {
  source: CliSource;
  /** Absolute path of the binary. */
  binaryPath: string;
  /** The version the binary reported (`--version`). */
  version: string;
  /** The semver range it had to satisfy. */
  range: string;
  /** Version facts recorded for this version, from the adapter's table or the project's lock. */
  expected: { facts: VersionFacts; qualifiedBy: 'table' | 'lock' } | undefined;
  /** Managed installs: the package that carried the binary and its verified `dist.integrity`. */
  package?: { name: string; integrity: string; fromCache: boolean };
}

/** The `adapters.<name>.cli` block every adapter shares. */
export interface CliSelection {
  source: CliSource;
  /** The pinned version (exact semver). */
  version: string;
  /** Absolute binary path; used by `source: path`. */
  path?: string | undefined;
  /** Range the binary must satisfy; default `>=M.m.0 <M.(m+1).0` of `version`. */
  range?: string | undefined;
}

/** The npm package that carries a CLI binary for one platform. */
export interface CliPackage {
  name: string;
  /** A build for x64 CPUs without AVX2, when the CLI publishes one. */
  baseline?: string;
}

/** What decides the platform package. */
export interface PlatformTarget {
  platform: NodeJS.Platform;
  arch: string;
  /** Linux only: the C library; `undefined` elsewhere. */
  libc: 'glibc' | 'musl' | undefined;
  /** False only when AVX2 is known to be missing; undefined (unknown) picks the regular build. */
  hasAvx2: boolean | undefined;
}

/**
 * What an adapter declares about its CLI so that core's one resolver (`PrepareServices.resolveCli`)
 * can find, install and check it: no adapter resolves its own binary.
 */
export interface CliDescriptor {
  /** The adapter name: the `adapters.<name>.cli` key, the cache folder `<cache>/cli/<name>/<version>`, `adapters install <name>`. */
  adapter: string;
  /** How messages name the CLI, e.g. `droid`, `claude`. */
  displayName: string;
  /** The executable looked up on PATH for `source: system` (`.exe` is added on Windows). */
  executable: string;
  /**
   * The platform packages by `<platform>-<arch>` (glibc, or no libc distinction) and
   * `<platform>-<arch>-musl`. On a musl Linux the `-musl` entry is taken when the CLI publishes
   * one, else the plain entry.
   */
  packages: Readonly<Record<string, CliPackage>>;
  /** The binary's path inside its platform package, e.g. `bin/droid`. */
  binPath(platform: NodeJS.Platform, arch: string): string;
  /**
   * The version of the platform package carrying CLI `version`, when it differs (Codex publishes
   * `@openai/codex@<version>-linux-x64`). Default: the CLI version itself.
   */
  packageVersion?(version: string, target: PlatformTarget): string;
  /** The version in the `--version` output (its first line), or undefined. */
  parseVersion(stdout: string): string | undefined;
  /** The qualified-version table: the facts recorded for a version, or undefined when it is not qualified. */
  versionFacts(version: string): VersionFacts | undefined;
}

/** Progress of a long preparation step (a download), for TTY rendering. */
export interface ProgressReport {
  phase: 'resolve' | 'download' | 'verify' | 'extract' | 'check' | 'done';
  message: string;
  receivedBytes?: number;
  totalBytes?: number;
}

/**
 * The runtime services an adapter uses to resolve its CLI, passed in so that adapters import
 * no upper-core module: the generic npm installer, the user's npm registry settings, and a
 * one-shot command runner (for `--version` checks). Built by `createPrepareServices()`.
 */
export interface PrepareServices {
  installPackage(options: InstallPackageOptions): Promise<InstalledPackage>;
  /** True when `dir` holds a complete install of that package version. */
  isInstalled(dir: string, packageName: string, version: string): Promise<boolean>;
  readNpmConfig(options: ReadNpmConfigOptions): Promise<RegistryConfig>;
  runCommand(file: string, args: readonly string[], options: RunCommandOptions): Promise<RunCommandResult>;
  /**
   * The one CLI resolver: finds (or installs, for `managed`) the binary `selection` names, runs
   * its `--version` with only PATH and a throwaway HOME, checks the range, and fills `expected`
   * from the descriptor's table, else the lock. Errors: `cli_not_found`, `unsupported_cli_version`,
   * `probe_failed`, `unsupported_platform`, `config_invalid`, and the installer's `install_*` codes.
   */
  resolveCli(selection: CliSelection, descriptor: CliDescriptor, ctx: PrepareContext): Promise<ResolvedCli>;
}

export type { FetchOptions, RegistryConfig };

/** A version's entry in the project's lock file (`one-works.lock`), as `prepare` reads it. */
export interface LockedVersion {
  facts: VersionFacts;
  integrity?: string | undefined;
}

/** Everything `prepare` needs from the runtime. */
export interface PrepareContext {
  services: PrepareServices;
  /** `<cache>` root (default $XDG_CACHE_HOME/one-works). */
  cacheDir: string;
  /** Recorded probe results from the project's lock file, keyed by CLI version. */
  lock: ReadonlyMap<string, LockedVersion>;
  onProgress?: (report: ProgressReport) => void;
  signal?: AbortSignal;
  /** When false, a managed version that is not installed yet is an error instead of a download. */
  install?: boolean;
  /** The user's environment: PATH for `system` and `--version`, npm settings for `managed`. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The user's working directory, whose `.npmrc` counts for `managed`. Default: process.cwd(). */
  cwd?: string;
  /** Registry settings; default: read from `env` and the `.npmrc` files of `cwd` and home. */
  registry?: RegistryConfig;
  fetchOptions?: FetchOptions;
  /** The platform to pick the package for; default: this machine. */
  platform?: PlatformTarget;
  /**
   * When true, a `--version` answer this machine recorded for the same binary file (same device,
   * inode, size, modification and change times; core/install/version-stamp.ts) is used instead
   * of starting the CLI again: for commands that run turns (run, send, the orchestrator), never
   * for doctor or probes. A replaced or upgraded binary is always checked again.
   */
  reuseVersionCheck?: boolean;
  /**
   * When false, a binary whose version this machine has not recorded (see `reuseVersionCheck`)
   * is a `probe_failed` error instead of a `--version` run: preparing it then starts nothing
   * (the orchestrator's preparation in idle time).
   */
  versionCheck?: boolean;
}

/** A launch description: core/process spawns it, with an allowlisted environment. */
export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  /** Variables added on top of the allowlisted environment and the sandbox's HOME/XDG roots. */
  env: Record<string, string>;
  /** Values in `env` (and elsewhere) that are secrets; registered with the redactor before spawn. */
  secrets: string[];
  /** Cap on one line the child writes on stdout, in bytes; a longer line reaches `transport.onerror`. Default: the codec's. */
  maxLineBytes?: number;
  /**
   * Absolute paths of files the child reads besides its binary (a runner's script): under a
   * sandbox their folders are bound read-only, since its private /tmp would hide one there.
   */
  readOnly?: string[];
}

/** One short command run inside the session sandbox (see {@link SessionIO.exec}). */
export interface SandboxCommand {
  command: string;
  args: readonly string[];
  /** Working directory (the workspace, or a directory inside it). */
  cwd: string;
  /** Wall-clock limit in ms; on expiry the command's process group is killed. */
  timeoutMs: number;
  /** Cap on each of stdout and stderr. */
  maxOutputBytes: number;
  /** Cancels the command (its process group is killed). */
  signal?: AbortSignal;
}

/** A file the adapter seeds into the session HOME before launch (path relative to HOME). */
export interface SeedFile {
  path: string;
  content: string;
  mode?: number;
}

/** A running child as the adapter sees it. */
export interface ChildChannel {
  /** Protocol messages over the child's stdio. */
  transport: Transport;
  pid: number | undefined;
  /** Settles when the child has exited and its stdout has drained (or the drain fallback fired). */
  exited: Promise<ChildExit>;
  /** Last bytes of stderr, redacted. */
  stderrTail(): string;
  /** Stops the child in steps (end stdin → grace → SIGTERM to the group → grace → SIGKILL). */
  stop(reason: StopReason): Promise<ChildExit>;
}

export type StopReason = 'shutdown' | 'timeout' | 'cancel' | 'crash';

export interface ChildExit {
  exitCode: number | null;
  signal: string | null;
  /** Why One Works stopped it, when it did. */
  stopReason: StopReason | undefined;
  /** True when the group had to be killed. */
  forced: boolean;
}

/** What One Works knows about a session when the adapter opens it. */
export interface SessionSpec {
  /** One Works session id. */
  sessionId: string;
  /** Canonical absolute workspace path: the agent's working directory. */
  workspace: string;
  /** The session's isolated HOME (exists, 0700). */
  home: string;
  cli: ResolvedCli;
  /** The native session id when resuming a session a previous process created. */
  nativeSessionId: string | undefined;
  model: string | undefined;
  effort: string | undefined;
  autonomy: Autonomy;
  title: string | undefined;
  /**
   * The session's One Works labels. An adapter whose CLI has session tags sends them when it
   * creates the native session, and only then (never on a load or resume); optional.
   */
  tags?: readonly string[];
}

/**
 * One Works' answers to a permission ask, the same for every agent: allow the call once, allow
 * it for the rest of the session (One Works records the approval: a later identical call is
 * allowed by the policy without asking a person again, in this process and later ones), or deny
 * it. Each adapter maps them to its native answers; cli/ and the orchestrator never see one.
 */
export const PERMISSION_CHOICES = ['allow-once', 'allow-session', 'deny'] as const;
export type PermissionChoice = (typeof PERMISSION_CHOICES)[number];

/** A permission question from the agent, normalised for the policy engine. */
export interface PermissionAsk {
  requestId: string;
  kind: 'tool' | 'question';
  tools: Array<{
    toolUseId: string;
    name: string;
    kind: string;
    label: string;
    /** For execute: the full command. */
    command?: string;
    /** For edits: absolute target paths. */
    paths?: string[];
    /** The agent's own impact assessment, if any. */
    impact?: 'low' | 'medium' | 'high';
    input: unknown;
  }>;
  /** The One Works answers this ask can take (the adapter maps each to a native answer); none for questions. */
  options: PermissionChoice[];
  /** For `kind: 'question'`: the questions, typed by the adapter from its native shape. */
  questions?: AskQuestion[];
}

/**
 * A question the agent asks a person (droid's ask_user, and its equivalents in other agents),
 * normalised by the adapter: the text, an optional topic, the options offered (none: free text
 * only) and whether several options may be picked.
 */
export interface AskQuestion {
  /** The question's number as the agent counts them (droid: from 1). */
  index: number;
  topic?: string;
  question: string;
  options: string[];
  multiSelect: boolean;
}

/** A person's answer to one {@link AskQuestion}: free text (picked options joined with ", "). */
export interface QuestionAnswer {
  index: number;
  question: string;
  answer: string;
}

export interface PermissionDecision {
  decision: 'allow' | 'deny';
  by: 'policy' | 'human';
  reason?: string;
  /** A person's decision: where the answer came from (terminal, `one-works answer`, MCP, elicitation). */
  channel?: AnswerChannel;
  /** For questions: the answers, when allowed. */
  answers?: QuestionAnswer[];
  /**
   * Approvals a person gave "for this session" with this decision (permission keys); the
   * session layer records them in the session, where later turns and processes apply them.
   */
  sessionAllows?: string[];
  /** Set when the ask was declined with nobody there to decide: why the session needs a person's attention. */
  attention?: string;
  /** The One Works answer this decision amounts to; when absent, {@link permissionChoice} derives it. */
  choice?: PermissionChoice;
}

/**
 * The One Works answer of a decision: `deny`; `allow-session` when a person approved the call
 * for the session (the decision carries `sessionAllows`, or says so in `choice`); else `allow-once`.
 */
export function permissionChoice(decision: Pick<PermissionDecision, 'decision' | 'choice' | 'sessionAllows'>): PermissionChoice {
  if (decision.decision === 'deny') return 'deny';
  if (decision.choice === 'allow-session' || (decision.sessionAllows?.length ?? 0) > 0) return 'allow-session';
  return 'allow-once';
}

/** The session layer's side of an open adapter session. */
export interface SessionIO {
  /** Records an event (the session layer stamps, dedups by key, persists and streams it). */
  emit(event: EventDraft): void;
  /** Asks the permission policy (and, if it escalates, a person) for a decision. */
  decide(ask: PermissionAsk): Promise<PermissionDecision>;
  /** Seeds files into HOME and spawns the launch through core/process. */
  launch(launch: LaunchSpec, seed: SeedFile[]): Promise<ChildChannel>;
  redactor: Redactor;
  /** Records the native session id as soon as it is known (durably, before any prompt). */
  setNativeSessionId(nativeSessionId: string): Promise<void>;
  /**
   * Optional: records how the agent runs the current turn when the adapter has more than one way
   * (droid: `stream-jsonrpc`, or `oneshot` after its live protocol failed), in the turn's run
   * record (`mode`), where `sessions`, the live view and MCP show it. Outside a turn it does nothing.
   * Resolves at once: the record write follows in order with the record's other changes and does
   * not hold up the prompt; the turn's end record carries the mode in any case.
   */
  setTurnMode?(mode: string): Promise<void>;
  /**
   * Optional: runs one short command for the agent inside the session sandbox (the allowlisted
   * environment with the session HOME, bubblewrap when the config says so, its own process
   * group), for adapters whose tools One Works executes itself. Output is redacted. Resolves
   * for any exit; rejects with `spawn_failed` when the command cannot start.
   */
  exec?(command: SandboxCommand): Promise<RunCommandResult>;
}

/** A turn's effective settings; `undefined` model or effort: the agent's own default. */
export interface TurnSettings {
  model: string | undefined;
  effort: string | undefined;
  autonomy: Autonomy;
}

export interface TurnInput {
  runId: string;
  text: string;
  /**
   * The turn's effective settings. A session whose agent already runs applies them before the
   * prompt when they differ from the running ones (droid: `update_session_settings`); the caller
   * first asks `canApplySettings` and restarts the session when the answer is no.
   */
  settings?: TurnSettings;
}

/** One open conversation with the agent. */
export interface AdapterSession {
  /** Resolves when the turn has ended: completed, failed, interrupted or unknown. Never on silence or exit alone. */
  prompt(input: TurnInput): Promise<TurnOutcome>;
  /** Protocol interrupt; the caller escalates to a kill after a grace period. */
  interrupt(): Promise<void>;
  /** Stops the child and waits for it to exit and drain (bounded). Idempotent. */
  close(): Promise<void>;
  /**
   * Optional: renames the native session (the title the agent CLI shows). Works on an open
   * session only, never starts a child; resolves once the CLI confirmed the new title and
   * rejects with a OneWorksError (stable code, redacted message) otherwise, or when `signal`
   * aborts. Adapters whose CLI has no titles leave it out.
   */
  rename?(title: string, signal?: AbortSignal): Promise<void>;
  /**
   * Optional, for agents that can be steered (capability `steering`): adds `text` to the live turn,
   * which the agent sees before its next model request of that turn. Resolves true once the agent
   * took it, false when no turn is live or the agent refused (the turn was ending); the caller
   * then interrupts and runs the message as a turn of its own.
   */
  steer?(text: string): Promise<boolean>;
  /**
   * Optional: whether the running agent can take `settings` for its next turn without a restart
   * (then `prompt` applies them). Without it, a running agent is only given turns with the
   * settings it runs with, and the caller restarts it for others.
   */
  canApplySettings?(settings: TurnSettings): boolean;
  /**
   * Optional, for keeping an agent warm between turns: resolves true when the agent process an
   * earlier turn started is up and answers, so the next turn can be given to it at once; false
   * (never a rejection) when none was started, it exited or was closed, or it did not answer
   * within `timeoutMs`. Without it, an agent is never kept warm.
   */
  ready?(timeoutMs: number): Promise<boolean>;
  /** Optional: the pid of the agent process while it runs (for memory accounting), else undefined. */
  agentPid?(): number | undefined;
  /**
   * Optional, for prewarming: starts the agent and negotiates the session (spawn, handshake,
   * settings) without a prompt, so that the first `prompt` finds it running; rejects (and
   * leaves the session closed) when the start fails. Without it, an agent is never prewarmed.
   */
  start?(): Promise<void>;
  /**
   * Facts negotiated with the child, once started: its native session id and the version facts
   * it announced (keys the adapter defines, as in `ProbeResult.facts`).
   */
  readonly info: { nativeSessionId?: string; versionFacts?: VersionFacts };
}

/** What a probe read off a CLI binary's first frames, without sending any prompt. */
export interface ProbeResult {
  cliVersion: string;
  binaryPath: string;
  /** The version facts the CLI announced (keys the adapter defines; a fact not announced is absent). */
  facts: VersionFacts;
  /** Other facts worth showing (native session id, model count, …). */
  details: Record<string, unknown>;
}

/** A permission-policy rule that a limitation can defeat (see `AdapterLimitation.defeats`). */
export type PolicyRuleName = 'deny' | 'denyPaths' | 'writeBoundary' | 'autonomy';

/**
 * A class of tool calls that the agent runs without asking One Works, so that the permission
 * policy never decides them. Adapters declare every such class they know of; `doctor` prints
 * them, and a turn whose policy depends on one gets a warning (stderr and a `log` event).
 */
export interface AdapterLimitation {
  /** The agent's native tool names in this class, e.g. `Task`. */
  tools: string[];
  /** The class, in One Works words: a `PermissionAsk` tool kind (`execute`, `edit`, …) or e.g. `subagent`. */
  kind: string;
  /** The policy rules these calls escape; a turn depends on the limitation when one of them is in effect. */
  defeats: PolicyRuleName[];
  /** Why the agent cannot be made to ask, in words a person can act on. */
  reason: string;
}

/** One line of `one-works doctor` contributed by an adapter. */
export interface DiagnosticNote {
  name: string;
  ok: boolean;
  /** A warning does not fail the doctor. */
  warn?: boolean;
  /** A finding about the configuration alone: `config check` shows it too. */
  config?: boolean;
  detail: string;
}

/** Starts a launch in a throwaway sandbox (core removes it afterwards). */
export type ThrowawayLauncher = (launch: LaunchSpec, seed: SeedFile[]) => Promise<ChildChannel>;

/**
 * How an adapter lists the models and tools its CLI offers. core/catalog caches the result on
 * disk under a key derived from `cacheFacts`, so `list` runs only when the cache is stale.
 */
export interface CatalogProvider<Config = unknown> {
  /**
   * The facts (never a secret) that decide what `list` returns for this config, binary and
   * request, e.g. the CLI version and the ids of user-configured models. Any JSON value; One
   * Works hashes it into the cache key.
   */
  cacheFacts(config: Config, cli: ResolvedCli, request: CatalogRequest): unknown;
  /**
   * Starts the CLI through `launch` (a throwaway sandbox that core removes afterwards), opens a
   * session without any prompt, lists models and tools, and stops the child before resolving.
   * Rejects with a OneWorksError when the CLI fails; never returns a partial catalog.
   */
  list(config: Config, cli: ResolvedCli, launch: ThrowawayLauncher, workdir: string, request: CatalogRequest): Promise<Catalog>;
  /**
   * Optional: when `error` (a failed `list`) means the CLI cannot start at all and this config's
   * turns still run without it (droid with `fallback: oneshot`), says how (e.g. "its turns run
   * in one-shot mode"); otherwise undefined. The model check before a turn then uses the last
   * catalog listed, however old, or checks nothing when none was ever listed, with a warning,
   * instead of refusing the turn (core/catalog `loadTurnCatalog`).
   */
  unreachable?(config: Config, error: OneWorksError): string | undefined;
}

/**
 * A session an adapter read from its CLI's own records (external import, read-only). The
 * history is projected into events keyed by native id and position, so importing the same
 * records again adds only what is new.
 */
export interface ImportedSession {
  nativeSessionId: string;
  /** The working directory the CLI recorded for the session (absolute, as recorded). */
  workspace: string;
  title?: string | undefined;
  /** `sub-session`: started by another session's tool call; `fork`: forked or compacted from another. */
  kind: 'top-level' | 'sub-session' | 'fork';
  /** The native id of the session this one was started by or forked from. */
  parentNativeSessionId?: string | undefined;
  /** Members of the records that One Works does not map, kept rather than dropped. */
  nativeDetails: Record<string, unknown>;
  events: EventDraft[];
  /** Files a new session HOME needs for the CLI to resume this session (paths relative to HOME). */
  homeFiles: SeedFile[];
}

/** How an adapter reads its CLI's own session records (`one-works import <adapter>`). */
export interface SessionImporter {
  /** Where the CLI keeps its session records below a user's HOME. */
  defaultRoot(home: string): string;
  /** True for the files below the root that are session records; nothing else is ever read. */
  isRecordFile(relativePath: string): boolean;
  /** True when a record file (relative to the root) belongs to one of these absolute project paths. */
  inProject(relativePath: string, projects: readonly string[]): boolean;
  /**
   * Parses one record file, all or nothing: a malformed or contradictory file throws a
   * OneWorksError `import_refused` whose message names the file and the line. Pure: no I/O.
   */
  parse(content: string, sourcePath: string): ImportedSession;
}

/**
 * How an adapter starts a fork from its own recorded native state (`one-works fork`) instead of a
 * transcript: a process runner copies the source's verified checkpoint. Absent: a fork's first
 * turn carries the source's history as a transcript.
 */
export interface NativeForker {
  /**
   * Copies the latest checkpoint among `runs` (the source's runs up to the fork point, oldest
   * first) from the source's session directory into the fork's, verifying it against its
   * manifest; the source is only read. Resolves with the fork's native session id and the run
   * whose checkpoint it starts from, or undefined when none of `runs` has a checkpoint. Throws
   * OneWorksError `state_corrupt` when the checkpoint does not match its manifest.
   */
  fork(request: {
    sourceDir: string;
    sourceNativeId: string;
    runs: readonly string[];
    targetDir: string;
  }): Promise<{ nativeSessionId: string; runId: string } | undefined>;
}

/**
 * What an agent CLI can do, declared by its adapter so that core decides from declarations
 * instead of one CLI's habits. Optional in the contract (an adapter without it is treated like
 * droid: load in a running process, authoritative catalog).
 */
export interface AdapterCapabilities {
  /** How a later process continues a native session: load it inside a running process, respawn the CLI with the native id, or not at all. */
  resume: 'load' | 'respawn' | 'none';
  /** Settings (model, effort, autonomy) can change between turns without a new process. */
  perTurnSettings: boolean;
  /** A message can steer a live turn. */
  steering: boolean;
  /** The native session has a title One Works can set. */
  titles: boolean;
  /** The catalog lists every model the CLI accepts; when false an unlisted model is passed through. */
  authoritativeCatalog: boolean;
  /** The CLI runs one turn per process. */
  oneTurnPerProcess: boolean;
}

/** An adapter: a name, a zod schema for its YAML block, and the two operations. */
export interface Adapter<Config = unknown> {
  readonly contractVersion: typeof ADAPTER_CONTRACT_VERSION;
  readonly name: string;
  readonly configSchema: z.ZodType<Config>;
  /**
   * What the adapter declares about its CLI; `prepare` hands it to `ctx.services.resolveCli`.
   * Absent for an adapter that runs a command the user names (a process runner), which has no
   * managed install.
   */
  readonly cli?: CliDescriptor;
  /**
   * Checks the version facts a probe read off the CLI against the facts recorded for its version
   * (`undefined`: an unqualified version, not in the table nor the lock). Returns the problems in
   * words a person can act on; empty when they match. `adapters probe|upgrade` and `doctor` ask
   * this, never a fixed version.
   */
  checkVersionFacts(announced: VersionFacts, expected: ResolvedCli['expected'], cliVersion: string): string[];
  /** What the CLI can do (see AdapterCapabilities); optional for adapters written before contract 2. */
  readonly capabilities?: AdapterCapabilities;
  /** Resolves and verifies the CLI binary the config selects (installing it when managed). */
  prepare(config: Config, ctx: PrepareContext): Promise<ResolvedCli>;
  /** Opens a session; no child is started until the first call that needs one. */
  open(config: Config, spec: SessionSpec, io: SessionIO): AdapterSession;
  /** Adapter-specific findings for `one-works doctor` (e.g. configured features it will skip). */
  diagnose?(config: Config): DiagnosticNote[];
  /** Findings that need contacting something (e.g. a model endpoint answers); `doctor` only, never `config check`. */
  diagnoseOnline?(config: Config): Promise<DiagnosticNote[]>;
  /** Starts the CLI in a throwaway HOME, opens a session without any prompt and reads its versions. */
  probe?(config: Config, cli: ResolvedCli, launch: ThrowawayLauncher, workdir: string): Promise<ProbeResult>;
  /**
   * The classes of tool calls this adapter's agent runs without asking (so the policy cannot
   * decide them); empty or absent when every call that is not read-only is asked about.
   */
  readonly limitations?: readonly AdapterLimitation[];
  /** Lists models and tools (`one-works models`, `one-works tools`, model validation before a turn). */
  readonly catalog?: CatalogProvider<Config>;
  /** Reads the CLI's own session records for `one-works import`; absent when it has none to read. */
  readonly importer?: SessionImporter;
  /** Starts a fork from the source's native checkpoint (`one-works fork`); absent: forks carry a transcript. */
  readonly forker?: NativeForker;
}

export { type CliSelectionOptions, cliSelectionSchema, defaultCliRange, endpointUrlSchema } from './adapter-config.js';
export { exitWords, exitedDuringTurn, stderrSuffix } from './process/child-exit.js';
