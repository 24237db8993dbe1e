import type { Autonomy, PermissionAsk, PermissionDecision } from '../core/adapter.js';
import { PermissionPolicySchema, createPermissionDecider, declineEscalator, type Escalator } from '../core/permissions/index.js';
import type { SessionRecord } from '../core/store/index.js';
import type { CliContext } from './context.js';
import type { Output } from './output.js';

/**
 * The permission decider for CLI sessions: the policy engine decides; escalations go to a person
 * when one is present (later: TTY prompt) and are declined (recorded as decided by policy)
 * without one. The autonomy used is the one of the session's live run.
 */
export function createDecider(
  ctx: CliContext,
  adapterConfig: unknown,
  _out: Output,
  escalator: Escalator = declineEscalator,
): (ask: PermissionAsk, session: SessionRecord) => Promise<PermissionDecision> {
  const policy = PermissionPolicySchema.parse((adapterConfig as { policy?: unknown }).policy ?? {});
  const deciders = new Map<string, (ask: PermissionAsk) => Promise<PermissionDecision>>();
  return (ask, session) => {
    const autonomy: Autonomy = session.runs.at(-1)?.autonomy ?? 'low';
    const key = `${session.id}:${autonomy}`;
    let decide = deciders.get(key);
    if (!decide) {
      decide = createPermissionDecider({ policy, autonomy, workspace: session.workspace, escalator });
      deciders.set(key, decide);
    }
    return decide(ask);
  };
}
