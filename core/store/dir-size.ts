import { lstat, readdir } from '../lazy-fs-promises.js';
import path from 'node:path';

/**
 * Bytes on disk under `target` (files' sizes, symlinks counted as links, not followed); 0 when
 * it does not exist. For reports such as "removed … (12.3 MB)".
 */
export async function directorySize(target: string): Promise<number> {
  const info = await lstat(target).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.size;
  const entries = await readdir(target).catch(() => [] as string[]);
  let total = 0;
  for (const entry of entries) total += await directorySize(path.join(target, entry));
  return total;
}

/** `1234567` → `1.2 MB` (decimal units, as `du -h --si` prints them). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
