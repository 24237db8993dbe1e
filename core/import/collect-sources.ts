import { constants } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { SessionImporter } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * Reads the record files an import takes from a root, failing closed: the root itself must be a
 * real directory (a link or anything else refuses the whole import); below it, a link (file or
 * folder), a file over the size cap, or a path that resolves outside the root is refused with
 * its name and never read. Only files the importer calls record files are opened, so settings,
 * credentials and MCP files next to them are never read. Nothing is written anywhere.
 */

/** Largest record file an import reads, in bytes (documented in the README). */
export const MAX_IMPORT_FILE_BYTES = 8 * 1024 * 1024;
// How deep below the root the walk looks: record files are never deeper than this.
const MAX_DEPTH = 4;

export interface ImportSource {
  /** Canonical absolute path. */
  path: string;
  content: string;
}

export interface ImportRefusal {
  path: string;
  reason: string;
}

export interface CollectOptions {
  root: string;
  importer: Pick<SessionImporter, 'isRecordFile' | 'inProject'>;
  /** Absolute project paths whose records are taken, or `all`. */
  projects: readonly string[] | 'all';
  maxFileBytes?: number;
}

/** Throws `import_refused` for a root that is missing, a link or not a directory. */
export async function collectImportSources(
  options: CollectOptions,
): Promise<{ root: string; sources: ImportSource[]; refused: ImportRefusal[] }> {
  const root = path.resolve(options.root);
  const info = await lstat(root).catch((error: NodeJS.ErrnoException) => {
    throw new OneWorksError(
      ERROR_CODES.IMPORT_REFUSED,
      `refused the import root ${root}: ${error.code === 'ENOENT' ? 'it does not exist' : error.code}`,
      {
        data: { path: root },
        cause: error,
      },
    );
  });
  if (info.isSymbolicLink() || !info.isDirectory()) {
    const what = info.isSymbolicLink() ? 'a symbolic link' : 'not a directory';
    throw new OneWorksError(
      ERROR_CODES.IMPORT_REFUSED,
      `refused the import root ${root}: it is ${what}; name the real directory with --root`,
      {
        data: { path: root },
      },
    );
  }
  const realRoot = await realpath(root);
  const maxBytes = options.maxFileBytes ?? MAX_IMPORT_FILE_BYTES;
  const sources: ImportSource[] = [];
  const refused: ImportRefusal[] = [];
  const wanted = (relative: string): boolean =>
    options.importer.isRecordFile(relative) && (options.projects === 'all' || options.importer.inProject(relative, options.projects));

  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(realRoot, full);
      if (entry.isSymbolicLink()) {
        // A linked folder could hold record files, and a linked file could be one: refused by name.
        if (wanted(relative) || (await isDirectoryBehind(full))) refused.push({ path: full, reason: 'it is a symbolic link' });
        continue;
      }
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) await walk(full, depth + 1);
        continue;
      }
      if (!entry.isFile() || !wanted(relative)) continue;
      const read = await readRecord(full, realRoot, maxBytes);
      if ('reason' in read) refused.push({ path: full, reason: read.reason });
      else sources.push(read);
    }
  };
  await walk(realRoot, 1);
  return { root: realRoot, sources, refused };
}

async function isDirectoryBehind(link: string): Promise<boolean> {
  try {
    return (await realpath(link)) !== link && (await lstat(await realpath(link))).isDirectory();
  } catch {
    return false;
  }
}

// Opens without following a link, checks where it really is and how big, then reads it.
async function readRecord(file: string, realRoot: string, maxBytes: number): Promise<ImportSource | { reason: string }> {
  const real = await realpath(file);
  const inside = path.relative(realRoot, real);
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside))
    return { reason: `it resolves to ${real}, outside the import root` };
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stats = await handle.stat();
    if (stats.size > maxBytes) return { reason: `it is ${stats.size} bytes, over the ${maxBytes}-byte cap for one record file` };
    return { path: real, content: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}
