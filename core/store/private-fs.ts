import { randomBytes } from '../lazy-crypto.js';
import { closeSync, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, type Stats, writeSync } from 'node:fs';
import { lstat, mkdir, open, rename, rm } from '../lazy-fs-promises.js';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/** Mode of every directory One Works creates under `<state>`. */
export const PRIVATE_DIR_MODE = 0o700;
/** Default mode of every file One Works writes under `<state>`. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and missing parents) with mode 0700; an existing directory keeps its mode.
 * Throws OneWorksError `state_corrupt` when `dir` exists but is a symlink or not a directory:
 * One Works never writes through a link it did not create.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  // The usual case, a directory that exists, costs one lstat; a missing one is made first.
  let info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!info) {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    info = await lstat(dir);
  }
  assertPrivateDir(dir, info);
}

/**
 * {@link ensurePrivateDir} with synchronous calls: for a command that only reads and exits (see
 * FileStoreOptions.syncReads), where it starts no thread-pool work, and before an agent's spawn
 * (see prepareSessionHome), where a thread-pool round trip costs more than the call.
 */
export function ensurePrivateDirSync(dir: string): void {
  let info = lstatSync(dir, { throwIfNoEntry: false });
  if (!info) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    info = lstatSync(dir);
  }
  assertPrivateDir(dir, info);
}

// `state_corrupt` unless `info` (an lstat of `dir`) is a directory that is not a symlink.
function assertPrivateDir(dir: string, info: Stats): void {
  if (info.isSymbolicLink() || !info.isDirectory()) {
    throw new OneWorksError(
      ERROR_CODES.STATE_CORRUPT,
      `${dir} is ${info.isSymbolicLink() ? 'a symlink' : 'not a directory'}; One Works refuses to write through it`,
      {
        data: { path: dir },
      },
    );
  }
}

/**
 * {@link writeFileAtomic} with `durable: false`, with synchronous calls (see prepareSessionHome):
 * a temp file in the same directory given exactly `mode`, renamed over `file` (a symlink there is
 * replaced, not followed); on failure the temp file is removed.
 */
export function writeFileAtomicSync(file: string, content: string | Uint8Array, mode: number = PRIVATE_FILE_MODE): void {
  const temp = tempPathFor(file);
  try {
    writeNewFileSync(temp, content, mode);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Creates `file`, which must not exist (EEXIST otherwise), with exactly `mode` and writes
 * `content`, fsyncing it when `durable`, with synchronous calls: for a file no reader sees before
 * it is complete (a temp file renamed or linked into place: writeFileAtomicSync, owner-lock.ts), on
 * a path where thread-pool round trips cost more than the calls. A failed write leaves the partial
 * file for the caller to remove.
 */
export function writeNewFileSync(file: string, content: string | Uint8Array, mode: number = PRIVATE_FILE_MODE, durable = false): void {
  const fd = openSync(file, 'wx', mode);
  try {
    // The umask may have narrowed the mode given to open; state files get exactly `mode`.
    fchmodSync(fd, mode);
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A temp file's path beside `file` (same directory, so a rename or link into place stays on one file system). */
export function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** {@link syncDir} with synchronous calls. */
export function syncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `file` atomically: writes a temp file in the same directory, fsyncs it, renames it
 * over `file` and fsyncs the directory. Readers see the old or the new content, never a mix; a
 * symlink at `file` is replaced, not followed. On failure the temp file is removed. With
 * `durable: false` the two fsyncs are skipped (still atomic, but a crash may lose the write):
 * for files rewritten before every use, such as a session HOME's seed files.
 */
export async function writeFileAtomic(
  file: string,
  content: string | Uint8Array,
  mode: number = PRIVATE_FILE_MODE,
  options: { durable?: boolean } = {},
): Promise<void> {
  const durable = options.durable !== false;
  const dir = path.dirname(file);
  const temp = tempPathFor(file);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      // The umask may have narrowed the mode given to open; state files get exactly `mode`. The
      // two calls are independent: side by side, one thread pool round trip instead of two.
      await Promise.all([handle.writeFile(content), handle.chmod(mode)]);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  if (durable) await syncDir(dir);
}

/** fsyncs a directory so a rename or a new entry in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
