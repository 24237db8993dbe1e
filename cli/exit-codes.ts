import type { ErrorCode } from '../core/errors.js';

/**
 * Exit codes of the `one-works` command, one table (documented in the README).
 * 0 success; 1 the turn ended but did not complete; 2 bad usage or configuration;
 * 3 workspace not approved; 4 CLI binary problems (install, version, range); 5 protocol or
 * session problems with the agent; 6 state directory problems; 130 interrupted by the user;
 * 7 git refused or failed (merge conflict, dirty target, a failed git command); 70 internal error.
 */
export const EXIT = {
  ok: 0,
  turnNotCompleted: 1,
  usage: 2,
  workspace: 3,
  cli: 4,
  agent: 5,
  state: 6,
  git: 7,
  internal: 70,
  interrupted: 130,
} as const;

const BY_CODE: Partial<Record<ErrorCode, number>> = {
  config_invalid: EXIT.usage,
  config_not_found: EXIT.usage,
  lock_invalid: EXIT.usage,
  usage: EXIT.usage,
  import_refused: EXIT.usage,
  model_unavailable: EXIT.usage,
  effort_unsupported: EXIT.usage,
  effort_required: EXIT.usage,
  request_key_conflict: EXIT.usage,
  workspace_not_approved: EXIT.workspace,
  install_not_found: EXIT.cli,
  install_integrity: EXIT.cli,
  install_failed: EXIT.cli,
  install_has_dependencies: EXIT.cli,
  unsupported_platform: EXIT.cli,
  cli_not_found: EXIT.cli,
  unsupported_cli_version: EXIT.cli,
  spawn_failed: EXIT.cli,
  protocol_mismatch: EXIT.agent,
  probe_failed: EXIT.agent,
  catalog_unavailable: EXIT.agent,
  process_exited: EXIT.agent,
  request_timeout: EXIT.agent,
  request_cancelled: EXIT.agent,
  connection_closed: EXIT.agent,
  peer_error: EXIT.agent,
  protocol_error: EXIT.agent,
  session_load_failed: EXIT.agent,
  session_unknown_outcome: EXIT.agent,
  session_busy: EXIT.agent,
  session_not_found: EXIT.usage,
  ask_not_found: EXIT.usage,
  ask_already_answered: EXIT.turnNotCompleted,
  state_locked: EXIT.state,
  state_corrupt: EXIT.state,
  state_unwritable: EXIT.state,
  state_unavailable: EXIT.state,
  state_schema_newer: EXIT.state,
  worker_lease_lost: EXIT.state,
  orchestrator_mismatch: EXIT.state,
  orchestrator_stopping: EXIT.state,
  orchestrator_unavailable: EXIT.state,
  internal: EXIT.internal,
  not_a_repository: EXIT.usage,
  no_worktree: EXIT.usage,
  git_failed: EXIT.git,
  merge_conflict: EXIT.git,
  target_dirty: EXIT.git,
  workspace_busy: EXIT.git,
};

export function exitCodeFor(code: ErrorCode): number {
  return BY_CODE[code] ?? EXIT.internal;
}
