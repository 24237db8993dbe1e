import { linkSync, rmSync } from 'node:fs';
import { readFile, unlink } from '../lazy-fs-promises.js';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { isOwnerAlive } from './owner-identity.js';
import { OwnerRecordSchema, type OwnerRecord } from './records.js';
import { PRIVATE_FILE_MODE, syncDirSync, tempPathFor, writeFileAtomic, writeNewFileSync } from './private-fs.js';
import type { OwnerClaim } from './store.js';

/**
 * Takes `<state>/owner.json` for `owner`. The file is written complete to a temp file and
 * hard-linked into place: link() fails with EEXIST when an owner exists, so creation is
 * exclusive (like O_EXCL) and a crash never leaves a half-written owner behind.
 *
 * An existing owner on this host whose process is gone is stale: it is replaced atomically and
 * the claim says `recovered`. "Gone" includes a pid now used by an unrelated process (pid reuse
 * after a reboot): the owner's identity is checked, see `isOwnerAlive`. A live owner, or one on another host (its pid cannot be checked from
 * here), is refused with `state_locked`. A malformed owner file is `state_corrupt`.
 * Two processes recovering the same stale owner at the same instant is not guarded against.
 */
export async function acquireOwnerFile(file: string, owner: OwnerRecord): Promise<OwnerClaim> {
  const content = `${JSON.stringify(owner)}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (linkExclusive(file, content)) return { recovered: false };
    const current = await readOwner(file);
    if (current === undefined) continue; // released between our link and read: try again
    if (current.host !== owner.host || isOwnerAlive(current)) throw stateLocked(file, current, owner.host);
    await writeFileAtomic(file, content);
    const check = await readOwner(file);
    if (check && sameOwner(check, owner)) return { recovered: true, previous: current };
    if (check) throw stateLocked(file, check, owner.host);
  }
  throw new OneWorksError(ERROR_CODES.STATE_LOCKED, `could not take ${file}: it keeps changing; is another One Works starting?`, {
    data: { file },
  });
}

/** Removes `file` if it still names `owner`; leaves anyone else's claim alone. */
export async function releaseOwnerFile(file: string, owner: OwnerRecord): Promise<void> {
  const current = await readOwner(file).catch(() => undefined);
  if (current && sameOwner(current, owner)) {
    await unlink(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

// Writes a complete temp file (fsynced) and links it to `file`, then fsyncs the directory; false
// when `file` already exists. Synchronous calls: a server takes the lock on the path to its first
// agent's spawn, where the dozen thread-pool round trips of the asynchronous calls left its
// thread idle for some 5 ms.
function linkExclusive(file: string, content: string): boolean {
  const temp = tempPathFor(file);
  try {
    writeNewFileSync(temp, content, PRIVATE_FILE_MODE, true);
  } catch (error) {
    // A file of that name that was there (EEXIST) is not this one's to remove; a partial one is.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(temp, { force: true });
    throw error;
  }
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  syncDirSync(path.dirname(file));
  return true;
}

/** The parsed owner file; undefined when there is none. Throws `state_corrupt` for a malformed one. */
export async function readOwner(file: string): Promise<OwnerRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: ReturnType<typeof OwnerRecordSchema.safeParse>;
  try {
    parsed = OwnerRecordSchema.safeParse(JSON.parse(text));
  } catch (error) {
    throw ownerCorrupt(file, error);
  }
  if (!parsed.success) throw ownerCorrupt(file, parsed.error);
  return parsed.data;
}

function sameOwner(a: OwnerRecord, b: OwnerRecord): boolean {
  return a.pid === b.pid && a.host === b.host && a.startedAt === b.startedAt;
}

function stateLocked(file: string, current: OwnerRecord, host: string): OneWorksError {
  const dir = path.dirname(file);
  const where =
    current.host === host
      ? `in use by One Works pid ${current.pid} (since ${current.startedAt}); wait for it to finish or stop it`
      : `owned by pid ${current.pid} on host ${current.host} (since ${current.startedAt}), which cannot be checked from ${host}; stop it there`;
  return new OneWorksError(
    ERROR_CODES.STATE_LOCKED,
    `state directory ${dir} is ${where}. If that process is not One Works or is gone, delete ${file}`,
    { data: { file, owner: current } },
  );
}

function ownerCorrupt(file: string, cause: unknown): OneWorksError {
  return new OneWorksError(ERROR_CODES.STATE_CORRUPT, `owner file ${file} is malformed; if no One Works process is running, delete it`, {
    data: { file },
    cause,
  });
}
