import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from './canonical-workspace.js';

/** How a new session is isolated: in the workspace itself, or in a git worktree of its repository. */
export type Isolation = 'none' | 'worktree';

/** `workspaces.isolation` and the approved roots that set their own. */
export interface IsolationDefaults {
  /** The default of every root that does not set its own (`workspaces.isolation`). */
  isolation: Isolation;
  /** Approved roots (absolute, as configured) with their own `isolation`. */
  roots?: ReadonlyArray<{ path: string; isolation: Isolation }> | undefined;
}

/**
 * The isolation a new session in `workspace` (canonical) gets by default: that of the most
 * specific configured root containing it (roots compared by real path; a missing root contains
 * nothing), else the global default.
 */
export async function isolationFor(workspace: string, defaults: IsolationDefaults): Promise<Isolation> {
  let best: { depth: number; isolation: Isolation } | undefined;
  for (const root of defaults.roots ?? []) {
    const canonical = await realpath(path.resolve(root.path)).catch(() => undefined);
    if (canonical === undefined || !isWithin(workspace, canonical)) continue;
    const depth = canonical.split(path.sep).length;
    if (!best || depth > best.depth) best = { depth, isolation: root.isolation };
  }
  return best?.isolation ?? defaults.isolation;
}
