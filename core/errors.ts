/**
 * Local errors of One Works. Every error that crosses a layer carries a stable string `code`
 * (never a wire number), a message a person can act on, optional `data` facts, and the
 * original error as `cause`. Messages and data never contain secrets: anything derived from a
 * child's output passes through the session's Redactor before it is put here.
 */
export const ERROR_CODES = {
  /** one-works.yaml (or a flag) is invalid: the message names file, line, key path and expectation. */
  CONFIG_INVALID: 'config_invalid',
  /** The config file could not be read. */
  CONFIG_NOT_FOUND: 'config_not_found',
  /** The lock file next to the config is malformed. */
  LOCK_INVALID: 'lock_invalid',
  /** A package or version does not exist in the registry (HTTP 404 or no matching version). */
  INSTALL_NOT_FOUND: 'install_not_found',
  /** The downloaded tarball did not match `dist.integrity`. */
  INSTALL_INTEGRITY: 'install_integrity',
  /**
   * The pinned package declares runtime `dependencies`: the installer unpacks one package and runs
   * no install step, so it would be installed half-working; refused before any download.
   */
  INSTALL_HAS_DEPENDENCIES: 'install_has_dependencies',
  /** Network or registry failure while installing. */
  INSTALL_FAILED: 'install_failed',
  /** No platform package carries a binary for this OS/arch. */
  UNSUPPORTED_PLATFORM: 'unsupported_platform',
  /** The selected CLI binary does not exist or is not executable. */
  CLI_NOT_FOUND: 'cli_not_found',
  /** The selected CLI reports a version outside the pinned range. */
  UNSUPPORTED_CLI_VERSION: 'unsupported_cli_version',
  /** The CLI's announced API/protocol version is missing, malformed or not the recorded one. */
  PROTOCOL_MISMATCH: 'protocol_mismatch',
  /** A probe of a CLI binary failed. */
  PROBE_FAILED: 'probe_failed',
  /** A child process could not be started (ENOENT, EACCES, …). */
  SPAWN_FAILED: 'spawn_failed',
  /** A child process exited (or was killed) while it was still needed. */
  PROCESS_EXITED: 'process_exited',
  /** A request got no response before its deadline. */
  REQUEST_TIMEOUT: 'request_timeout',
  /** A request was abandoned through its AbortSignal. */
  REQUEST_CANCELLED: 'request_cancelled',
  /** The connection closed while requests were pending, or a call was made on a closed connection. */
  CONNECTION_CLOSED: 'connection_closed',
  /** The peer answered a request with an error. */
  PEER_ERROR: 'peer_error',
  /** The peer sent something that is not a valid frame (bad JSON, bad envelope, oversized line). */
  PROTOCOL_ERROR: 'protocol_error',
  /** A later process could not load the native session: never replaced by a new one. */
  SESSION_LOAD_FAILED: 'session_load_failed',
  /** No session with that id. */
  SESSION_NOT_FOUND: 'session_not_found',
  /** The session cannot continue (last turn's outcome unknown, or it needs attention). */
  SESSION_UNKNOWN_OUTCOME: 'session_unknown_outcome',
  /** Another turn of this session is live. */
  SESSION_BUSY: 'session_busy',
  /** A turn was refused because the admission queue (all sessions, or this session's) is full; nothing was accepted. */
  QUEUE_FULL: 'queue_full',
  /** A request key was reused with different arguments than the request that first claimed it. */
  REQUEST_KEY_CONFLICT: 'request_key_conflict',
  /** The workspace is not inside an approved root (or escapes it). */
  WORKSPACE_NOT_APPROVED: 'workspace_not_approved',
  /** Another process owns the state directory. */
  STATE_LOCKED: 'state_locked',
  /** A file to import was refused (malformed, contradictory, oversized, a link, outside the root); nothing of it was recorded. */
  IMPORT_REFUSED: 'import_refused',
  /** The state directory cannot be written (disk full, quota, read-only file system, permissions). */
  STATE_UNWRITABLE: 'state_unwritable',
  /** A state file is malformed; One Works refuses to rewrite it. */
  STATE_CORRUPT: 'state_corrupt',
  /** The state database (state.backend: postgres) cannot be reached or refused the connection; retryable once it is back. */
  STATE_UNAVAILABLE: 'state_unavailable',
  /** The state database's schema is newer than this One Works: upgrade One Works; nothing was changed. */
  STATE_SCHEMA_NEWER: 'state_schema_newer',
  /** A fleet worker's lease expired or was taken over: its claimed turns are not its own any more (they are recorded `unknown`). */
  WORKER_LEASE_LOST: 'worker_lease_lost',
  /** The running orchestrator was started with a different config or environment than this command; restart it. */
  ORCHESTRATOR_MISMATCH: 'orchestrator_mismatch',
  /**
   * The state directory's orchestrator does not answer (stopped with SIGSTOP, hung) or exited
   * before serving; the message names its pid and socket and how to resume or stop it.
   */
  ORCHESTRATOR_UNAVAILABLE: 'orchestrator_unavailable',
  /** The orchestrator is shutting down and accepts no new turns; retry (a new one starts). */
  ORCHESTRATOR_STOPPING: 'orchestrator_stopping',
  /** The adapter's model catalog could not be listed in time; nothing was accepted. Retryable. */
  CATALOG_UNAVAILABLE: 'catalog_unavailable',
  /** The requested model is not in the live catalog. */
  MODEL_UNAVAILABLE: 'model_unavailable',
  /** The requested reasoning effort is not accepted. */
  EFFORT_UNSUPPORTED: 'effort_unsupported',
  /** A turn changes the model and no supported effort is known for the new one: name one explicitly. */
  EFFORT_REQUIRED: 'effort_required',
  /** The workspace of a worktree session is not inside a git repository. */
  NOT_A_REPOSITORY: 'not_a_repository',
  /** A git command that One Works ran failed; the message carries git's own words. */
  GIT_FAILED: 'git_failed',
  /** A merge was refused because it would conflict; nothing was changed. */
  MERGE_CONFLICT: 'merge_conflict',
  /** A merge was refused because the target branch's checkout has uncommitted changes; nothing was changed. */
  TARGET_DIRTY: 'target_dirty',
  /** A merge was refused because the user's checkout is in use (a live turn there, or another merge); nothing was changed. Retryable. */
  WORKSPACE_BUSY: 'workspace_busy',
  /** The session has no worktree (never had one, or it was discarded). */
  NO_WORKTREE: 'no_worktree',
  /** No open ask with that id (never opened, or already settled and forgotten). */
  ASK_NOT_FOUND: 'ask_not_found',
  /** The ask was already answered (first answer wins); the message says by whom. */
  ASK_ALREADY_ANSWERED: 'ask_already_answered',
  /** Bad command-line usage. */
  USAGE: 'usage',
  /** A bug: an unexpected failure inside One Works. */
  INTERNAL: 'internal',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export interface OneWorksErrorOptions {
  /** Facts about the failure (no secrets). */
  data?: Record<string, unknown>;
  /** The error this one wraps. */
  cause?: unknown;
}

/** The one local error type of One Works. */
export class OneWorksError extends Error {
  override readonly name = 'OneWorksError';
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: OneWorksErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }
}

/** True when `error` is a OneWorksError, optionally with the given code. */
export function isOneWorksError(error: unknown, code?: ErrorCode): error is OneWorksError {
  return error instanceof OneWorksError && (code === undefined || error.code === code);
}
