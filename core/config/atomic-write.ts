import { randomBytes } from '../lazy-crypto.js';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `content` atomically: write a temp file in the same directory, fsync it,
 * rename it over `path`, then fsync the directory. Readers see the old or the new file, never a
 * partial one. An existing file's mode is kept (0o644 for a new file). On failure the temp file
 * is removed and the error rethrown.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const mode = await stat(path).then(
    (s) => s.mode & 0o777,
    () => 0o644,
  );
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

// Makes the rename durable; some file systems refuse fsync on a directory, which is not fatal.
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}
