import type { PermissionOption } from '@agentclientprotocol/sdk';

/**
 * The agent's offered option that carries One Works' decision: an allow is single-use
 * (`allow_once`; `allow_always` would let the agent skip the policy next time, so it is never
 * chosen), a deny is `reject_once`, else `reject_always`. Undefined when nothing offered fits:
 * the caller then answers `cancelled`, which every agent must accept, so no option the agent did
 * not offer is ever selected.
 */
export function chooseOption(options: readonly PermissionOption[], decision: 'allow' | 'deny'): PermissionOption | undefined {
  const kinds = decision === 'allow' ? ['allow_once'] : ['reject_once', 'reject_always'];
  for (const kind of kinds) {
    const option = options.find((o) => o.kind === kind);
    if (option) return option;
  }
  return undefined;
}
