import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * The canonical form of a workspace: an absolute real path (every symlink and `..` resolved)
 * of an existing directory. Relative paths resolve against the current directory.
 *
 * Throws OneWorksError `workspace_not_approved` when the path does not exist or is not a
 * directory, naming the path; the Node error is kept as `cause`.
 */
export async function canonicalWorkspace(workspace: string): Promise<string> {
  const absolute = path.resolve(workspace);
  let canonical: string;
  try {
    canonical = await realpath(absolute);
  } catch (error) {
    throw new OneWorksError(ERROR_CODES.WORKSPACE_NOT_APPROVED, `workspace ${absolute} does not exist`, {
      data: { workspace: absolute },
      cause: error,
    });
  }
  const info = await stat(canonical);
  if (!info.isDirectory()) {
    throw new OneWorksError(ERROR_CODES.WORKSPACE_NOT_APPROVED, `workspace ${absolute} is not a directory`, {
      data: { workspace: absolute, canonical },
    });
  }
  return canonical;
}

/**
 * True when `inner` is `outer` or lies below it. Pure string logic on absolute paths: pass
 * canonical paths (from `canonicalWorkspace`) so symlinks cannot fool it. `/a/root-evil` is not
 * inside `/a/root`.
 */
export function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(path.resolve(outer), path.resolve(inner));
  return relative === '' || (!path.isAbsolute(relative) && relative !== '..' && !relative.startsWith(`..${path.sep}`));
}

/**
 * True when two trees overlap: the same directory, or one an ancestor of the other. Used by
 * workspace locks. Pure: pass canonical paths.
 */
export function treesOverlap(a: string, b: string): boolean {
  return isWithin(a, b) || isWithin(b, a);
}
