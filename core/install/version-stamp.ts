import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDir, writeFileAtomic } from '../store/private-fs.js';

/**
 * A CLI binary's `--version` answer remembered across processes, so that commands that run turns
 * (`run`, `send`, the orchestrator) do not start the agent CLI once more just to ask its version:
 * `<cache>/version-checks/<hash of the path>.json` holds the version with the file's identity
 * (device, inode, size, modification and change times). It is used only while the file at that
 * path still has that identity: an upgrade, a reinstall or a replaced symlink target is checked
 * again. `doctor` and probes never use it.
 */

interface Stamp {
  binaryPath: string;
  identity: string;
  version: string;
}

/**
 * The version recorded for `binaryPath` when the file is still the one that answered; else
 * undefined. `identity`: the file's identity when the caller looks it up already (its
 * {@link fileIdentity}), so that the file is looked at once.
 */
export async function rememberedVersion(
  cacheDir: string,
  binaryPath: string,
  identity: Promise<string | undefined> = fileIdentity(binaryPath),
): Promise<string | undefined> {
  // The stamp is read while the file is looked at: neither waits for the other.
  const [current, text] = await Promise.all([identity, readFile(stampPath(cacheDir, binaryPath), 'utf8').catch(() => undefined)]);
  if (current === undefined || text === undefined) return undefined;
  try {
    const stamp = JSON.parse(text) as Partial<Stamp>;
    return stamp.binaryPath === binaryPath && stamp.identity === current && typeof stamp.version === 'string' ? stamp.version : undefined;
  } catch {
    return undefined;
  }
}

/** Records the version `binaryPath` answered (best effort: a cache that cannot be written only costs the next check). */
export async function rememberVersion(cacheDir: string, binaryPath: string, version: string, identity?: string): Promise<void> {
  const current = identity ?? (await fileIdentity(binaryPath));
  if (current === undefined) return;
  const stamp: Stamp = { binaryPath, identity: current, version };
  const file = stampPath(cacheDir, binaryPath);
  await ensurePrivateDir(path.dirname(file))
    .then(() => writeFileAtomic(file, `${JSON.stringify(stamp)}\n`))
    .catch(() => undefined);
}

/** The identity of the file at `binaryPath` (symlinks followed), or undefined when it cannot be read. */
export async function fileIdentity(binaryPath: string): Promise<string | undefined> {
  try {
    const s = await stat(binaryPath, { bigint: true });
    return [s.dev, s.ino, s.size, s.mtimeNs, s.ctimeNs].join(':');
  } catch {
    return undefined;
  }
}

function stampPath(cacheDir: string, binaryPath: string): string {
  const name = createHash('sha256').update(binaryPath).digest('hex').slice(0, 32);
  return path.join(cacheDir, 'version-checks', `${name}.json`);
}
