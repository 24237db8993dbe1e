import { cp, mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** How long building a copy of the package may take (beforeAll's timeout). */
export const BUILD_TIMEOUT_MS = 120_000;

/** A copy of the package's sources (with the checkout's node_modules linked) in a fresh temporary root. */
export interface PackageCopy {
  /** The temporary directory holding the copy; the caller removes it. */
  root: string;
  /** The copy: cli/, core/, adapters/, scripts/, package.json and a node_modules link. */
  pkg: string;
}

/**
 * Copies the package into a fresh directory under the system temp dir (`prefix` names it), for
 * tests that build or run dist/ without touching the checkout's own (it may be stale or in use).
 */
export async function copyPackage(prefix: string): Promise<PackageCopy> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const pkg = join(root, 'pkg');
  await mkdir(pkg);
  for (const part of ['cli', 'core', 'adapters', 'scripts', 'package.json'])
    await cp(join(REPO, part), join(pkg, part), { recursive: true });
  await symlink(join(REPO, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  return { root, pkg };
}

/** Runs the copy's `scripts/build.js` (the build `npm run build` runs); never rejects. */
export function buildPackage(pkg: string) {
  return execa(process.execPath, [join(pkg, 'scripts', 'build.js')], { reject: false, stdin: 'ignore' });
}
