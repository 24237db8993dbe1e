import type { AdapterLimitation, Autonomy, PolicyRuleName } from '../adapter.js';
import type { PermissionPolicy } from './policy.js';

/**
 * Which declared adapter limitations a session's policy depends on: a limitation matters when
 * one of the rules it defeats is in effect for the session. Pure.
 */

/** A limitation the policy depends on, with the rules in effect that it defeats. */
export interface LimitationInEffect {
  limitation: AdapterLimitation;
  rules: PolicyRuleName[];
}

/**
 * The rules in effect for a policy at an autonomy level: `deny` and `denyPaths` when they list
 * something, `autonomy` below `high` (calls then escalate), and `writeBoundary` always (writes
 * outside the workspace and its extra roots escalate at every level).
 */
export function rulesInEffect(policy: PermissionPolicy, autonomy: Autonomy): PolicyRuleName[] {
  return [
    ...(policy.deny.length > 0 ? (['deny'] as const) : []),
    ...(policy.denyPaths.length > 0 ? (['denyPaths'] as const) : []),
    'writeBoundary',
    ...(autonomy !== 'high' ? (['autonomy'] as const) : []),
  ];
}

/** The limitations among `limitations` that defeat a rule in effect, in declaration order. */
export function limitationsInEffect(
  limitations: readonly AdapterLimitation[],
  policy: PermissionPolicy,
  autonomy: Autonomy,
): LimitationInEffect[] {
  const active = new Set(rulesInEffect(policy, autonomy));
  return limitations
    .map((limitation) => ({ limitation, rules: limitation.defeats.filter((rule) => active.has(rule)) }))
    .filter((entry) => entry.rules.length > 0);
}

/** One line for a person: what escapes the policy, which rules of this session it defeats, and why. */
export function describeLimitation(adapter: string, entry: LimitationInEffect): string {
  const { limitation, rules } = entry;
  return (
    `${adapter} runs ${limitation.tools.join(', ')} (${limitation.kind}) calls without asking One Works, ` +
    `so this session's ${rules.join(', ')} rule${rules.length > 1 ? 's do' : ' does'} not hold for them: ${limitation.reason}`
  );
}
