import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { canonicalWorkspace, isWithin } from './canonical-workspace.js';

export interface ApprovalSource {
  /** The config key that lists approved roots, named in the error (e.g. `workspaces.approved`). */
  configKey: string;
  /** The config file to edit, when there is one. */
  configPath?: string;
}

/**
 * Checks that `workspace` lies inside one of `approvedRoots`, comparing canonical real paths,
 * so `..` traversal (`/a/root/../other`), sibling prefixes (`/a/root-evil` against `/a/root`)
 * and symlinks inside a root that point outside it are all refused. Roots that do not exist
 * approve nothing. Resolves with the canonical workspace.
 *
 * Throws OneWorksError `workspace_not_approved` naming the workspace, its canonical path and
 * where to approve it (config key and file). `canonical`: `canonicalWorkspace(workspace)` when the
 * caller has asked it already (its real path is then not asked again).
 */
export async function checkApproved(
  workspace: string,
  approvedRoots: readonly string[],
  source: ApprovalSource = { configKey: 'workspaces.approved' },
  canonical: Promise<string> = canonicalWorkspace(workspace),
): Promise<string> {
  // Side by side: the roots' real paths do not depend on the workspace's (a failure is the workspace's alone).
  const [real, roots] = await Promise.all([canonical, canonicalRoots(approvedRoots)]);
  if (roots.some((root) => isWithin(real, root))) return real;
  const shown = real === path.resolve(workspace) ? real : `${path.resolve(workspace)} (really ${real})`;
  const where = source.configPath ? `${source.configKey} in ${source.configPath}` : source.configKey;
  throw new OneWorksError(
    ERROR_CODES.WORKSPACE_NOT_APPROVED,
    `workspace ${shown} is not inside an approved root; add it (or a parent directory) to ${where}`,
    { data: { workspace: path.resolve(workspace), canonical: real, approvedRoots: [...approvedRoots], ...source } },
  );
}

// Real paths of the roots that exist; a missing root cannot contain an existing workspace.
async function canonicalRoots(roots: readonly string[]): Promise<string[]> {
  const resolved = await Promise.all(roots.map((root) => realpath(path.resolve(root)).catch(() => undefined)));
  return resolved.filter((root): root is string => root !== undefined);
}
