import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdapterLimitation } from '../../core/adapter.js';

/**
 * How droid is made to ask One Works before every tool call that is not read-only (see
 * docs/droid-adapter.md, "Permissions: droid asks, One Works decides"). One Works' autonomy
 * level is One Works' own rule (core/permissions); droid itself always runs at its lowest level.
 */

/**
 * droid's own autonomy level in every One Works session. At `off`, droid 0.225.2 and 0.215.0 ask
 * (`droid.request_permission`) for every Execute whatever `riskLevel` the model declares, every
 * Create and Edit, and every MCP tool call, and the model is offered the same tools as at `high`.
 */
export const NATIVE_AUTONOMY = 'off' as const;

/**
 * Commands droid runs without asking at every autonomy level, `off` included: its built-in
 * `commandAllowlist` default (found in the 0.225.2 and 0.215.0 binaries, checked live). Setting
 * `commandAllowlist` does not remove them (droid merges the levels), but a `commandDenylist`
 * entry makes droid ask for the command (it then reports the call as high impact). So One Works
 * writes them, at the managed level, as droid's deny list: droid asks, and the policy decides.
 */
export const DROID_BUILTIN_ALLOWLIST: readonly string[] = Object.freeze([
  'ls',
  'pwd',
  'dir',
  'git status',
  'git diff',
  'git log',
  'git show',
  'git blame',
  'git ls-files',
]);

/** The workspace files where droid reads a project-level `commandAllowlist`. */
const WORKSPACE_SETTINGS = ['.factory/settings.json', '.factory/settings.local.json'];

/**
 * The `commandAllowlist` entries of the workspace's own droid settings, read at session start.
 * droid runs such commands without asking even at `off` and even when the managed level sets its
 * own allowlist; a managed `commandDenylist` entry wins over them. So the session's deny list
 * gets these entries too. A missing, unreadable or malformed file contributes nothing (droid
 * then has nothing to read from it either).
 */
export function workspaceAllowlist(workspace: string): string[] {
  const entries = WORKSPACE_SETTINGS.flatMap((file) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(workspace, file), 'utf8'));
    } catch {
      return [];
    }
    const list = (parsed as { commandAllowlist?: unknown } | null)?.commandAllowlist;
    return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string' && entry.trim().length > 0) : [];
  });
  return [...new Set(entries)];
}

/**
 * The calls droid runs without asking even at autonomy `off` and that are not read-only: the
 * policy never sees them, so rules that would stop them cannot be enforced.
 */
export const DROID_LIMITATIONS: readonly AdapterLimitation[] = Object.freeze([
  {
    tools: ['Task'],
    kind: 'subagent',
    defeats: ['deny', 'denyPaths', 'writeBoundary', 'autonomy'],
    reason:
      'droid launches a Task sub-agent without a permission request at every autonomy level, and no setting or hook makes it ask; ' +
      "the sub-agent's own tool calls were not observable offline, so One Works cannot promise that its policy decides them",
  },
]);
