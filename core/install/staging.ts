import { randomBytes } from 'node:crypto';
import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { OneWorksError } from '../errors.js';

/**
 * Sibling directories of an install target. `<target>.tmp-<pid>-<hex>` is a download in
 * progress; `<target>.old-<pid>-<hex>` is an incomplete target moved aside. The pid in the name
 * tells a later install whether the owner is still alive.
 */
type SiblingKind = 'tmp' | 'old';

const SIBLING_PATTERN = /^\.(tmp|old)-(\d+)-[0-9a-f]+$/;

/** A fresh sibling name of `targetDir` owned by this process. */
export function siblingName(targetDir: string, kind: SiblingKind): string {
  return `${targetDir}.${kind}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/**
 * Removes siblings of `targetDir` left by processes that no longer exist (an install killed
 * midway). Siblings of live processes, this one included, are left alone: they may be
 * downloading right now. Best effort: a sibling that cannot be removed does not stop the install.
 */
export async function removeStaleSiblings(targetDir: string): Promise<void> {
  const parent = path.dirname(targetDir);
  const base = path.basename(targetDir);
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(base)) continue;
    const match = SIBLING_PATTERN.exec(name.slice(base.length));
    if (!match || isAlive(Number(match[2]))) continue;
    // A stale sibling only wastes disk; failing to remove it must not fail the install.
    await rm(path.join(parent, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Moves the complete `stagingDir` to `targetDir` with one rename. Resolves true when this call
 * published it, false when another installer already had (`isComplete` holds for the target):
 * the caller then discards `stagingDir`. An incomplete directory in the way (not written by
 * this installer) is moved aside and removed first.
 */
export async function publishDir(stagingDir: string, targetDir: string, isComplete: () => Promise<unknown>): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(stagingDir, targetDir);
      return true;
    } catch (error) {
      if (!isOccupied(error)) throw error;
    }
    // Lost the race to a concurrent install of the same version: use the winner's directory.
    if (await isComplete()) return false;
    if (attempt > 0) {
      throw new OneWorksError('install_failed', `${targetDir} keeps reappearing without a completion marker; remove it and retry`);
    }
    const aside = siblingName(targetDir, 'old');
    await rename(targetDir, aside).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
    await rm(aside, { recursive: true, force: true });
  }
}

// rename(2) onto a non-empty directory fails with ENOTEMPTY or EEXIST (EPERM on Windows).
function isOccupied(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EPERM';
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
