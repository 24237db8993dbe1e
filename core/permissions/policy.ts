import path from 'node:path';
import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import type { PermissionAsk } from '../adapter.js';
import { COMMAND_SEPARATOR } from './command-match.js';
import { decideTool } from './tool-verdict.js';
import type { PolicyContext, PolicyVerdict, ToolVerdict } from './tool-verdict.js';

/**
 * The permission policy engine: a pure function from (ask, policy, autonomy, workspace,
 * remembered approvals) to allow / deny / escalate. It names no agent CLI; adapters normalise
 * their native asks into `PermissionAsk` first.
 */

/**
 * The YAML policy block. Every list defaults to empty. To embed it with a default for the whole
 * block, use `.prefault({})` (zod 4's `.default` would skip the inner defaults).
 */
export const PermissionPolicySchema = lazySchema(() => {
  const commandPrefix = z.string().refine((entry) => entry.trim().length > 0, { message: 'must not be blank' });
  const allowPrefix = commandPrefix.refine((entry) => !COMMAND_SEPARATOR.test(entry), {
    message: "allow entries match one command at a time; split chains such as 'a && b' into separate entries",
  });
  const absolutePath = z.string().refine((entry) => path.isAbsolute(entry), { message: 'must be an absolute path' });
  return z.strictObject({
    /** Command prefixes that auto-allow, e.g. `npm test`; every segment of a chain must match one. */
    allow: z.array(allowPrefix).default([]),
    /** Command prefixes that auto-deny, e.g. `git push`; any segment of a chain matching one denies. */
    deny: z.array(commandPrefix).default([]),
    /** Absolute path prefixes that writes may never touch. */
    denyPaths: z.array(absolutePath).default([]),
    /** Absolute extra roots where writes count as inside the workspace (the workspace always does). */
    writeBoundary: z.array(absolutePath).default([]),
  });
});
export type PermissionPolicy = z.infer<typeof PermissionPolicySchema>;
export type PermissionPolicyInput = z.input<typeof PermissionPolicySchema>;

/** The engine's answer for a whole ask, with the verdict on each tool. */
export interface PolicyResult {
  verdict: PolicyVerdict;
  /** Human-readable, e.g. "command 'npm test' is on the allowlist". */
  reason: string;
  perTool: ToolVerdict[];
}

/**
 * Decides an ask. Questions always escalate (a person answers them, never the policy); a batch
 * is allowed only when every tool is, denied when any tool is, and escalates otherwise; an ask
 * naming no tools escalates. Pure: no I/O, no clock, the same inputs give the same result.
 */
export function decidePermission(ask: PermissionAsk, ctx: PolicyContext): PolicyResult {
  if (ask.kind === 'question') {
    const reason = 'questions for the person are always escalated';
    return { verdict: 'escalate', reason, perTool: ask.tools.map((t) => ({ toolUseId: t.toolUseId, verdict: 'escalate', reason })) };
  }
  if (ask.kind !== 'tool') {
    return { verdict: 'escalate', reason: `ask of unknown kind '${String(ask.kind)}'`, perTool: [] };
  }
  if (ask.tools.length === 0) return { verdict: 'escalate', reason: 'the ask names no tools', perTool: [] };

  const perTool = ask.tools.map((tool) => decideTool(tool, ctx));
  const verdict: PolicyVerdict = perTool.some((t) => t.verdict === 'deny')
    ? 'deny'
    : perTool.every((t) => t.verdict === 'allow')
      ? 'allow'
      : 'escalate';
  const deciding = verdict === 'allow' ? perTool : perTool.filter((t) => t.verdict === verdict);
  return { verdict, reason: deciding.map((t) => t.reason).join('; '), perTool };
}
