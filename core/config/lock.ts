import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import semver from 'semver';
import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { OneWorksError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';

/** The lock file's name; it lives next to one-works.yaml. */
export const LOCK_FILE_NAME = 'one-works.lock';

/** What an upgrade probe recorded about one CLI version: the version facts the adapter defines. */
export const LockEntrySchema = lazySchema(() =>
  z.strictObject({
    facts: z.record(z.string(), z.string().min(1)),
    integrity: z.string().min(1).optional(),
    package: z.string().min(1).optional(),
    probedAt: z.iso.datetime({ offset: true }),
  }),
);

// Lock files written before version facts were per adapter (lockfileVersion 1) hold droid's
// pair at the top of each entry; they are read as facts with those two keys.
const LegacyLockEntrySchema = lazySchema(() =>
  z
    .strictObject({
      apiVersion: z.string().min(1),
      protocolVersion: z.string().min(1),
      integrity: z.string().min(1).optional(),
      package: z.string().min(1).optional(),
      probedAt: z.iso.datetime({ offset: true }),
    })
    .transform(({ apiVersion, protocolVersion, ...rest }) => ({ facts: { apiVersion, protocolVersion }, ...rest })),
);

/** The lock format this version writes. */
export const LOCKFILE_VERSION = 2;

/** `one-works.lock`: adapter name → CLI version → probe record (version 1 files are read too). */
export const LockFileSchema = lazySchema(() =>
  z.strictObject({
    lockfileVersion: z.union([z.literal(1), z.literal(LOCKFILE_VERSION)]).transform(() => LOCKFILE_VERSION),
    adapters: z.record(z.string(), z.record(z.string(), z.union([LockEntrySchema, LegacyLockEntrySchema]))),
  }),
);

export type LockEntry = z.output<typeof LockEntrySchema>;
export type LockFile = z.output<typeof LockFileSchema>;

/** The lock path that belongs to a config file: `one-works.lock` in the same directory. */
export function lockPathFor(configPath: string): string {
  return join(dirname(configPath), LOCK_FILE_NAME);
}

/**
 * Reads a lock file. A missing file is an empty lock. Throws OneWorksError('lock_invalid')
 * naming the file when it is not JSON or does not match the schema, and 'config_not_found'
 * when it exists but cannot be read.
 */
export async function readLock(path: string): Promise<LockFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { lockfileVersion: LOCKFILE_VERSION, adapters: {} };
    throw new OneWorksError('config_not_found', `cannot read lock file ${path}: ${code ?? String(error)}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw lockInvalid(path, `not valid JSON (${(error as Error).message})`, error);
  }
  const result = LockFileSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    throw lockInvalid(path, `${where}${issue?.message ?? 'does not match the lock schema'}`, result.error);
  }
  return result.data;
}

/**
 * Records a probe result for `adapter` at CLI `version` (replacing an earlier one) and rewrites
 * the lock atomically with stable formatting: adapters by name, versions in semver order, two
 * spaces. Returns the new lock. Read-modify-write: concurrent writers may lose an update.
 */
export async function recordProbe(path: string, adapter: string, version: string, entry: LockEntry): Promise<LockFile> {
  const checked = LockEntrySchema.parse(entry);
  const lock = await readLock(path);
  const next: LockFile = {
    lockfileVersion: LOCKFILE_VERSION,
    adapters: { ...lock.adapters, [adapter]: { ...lock.adapters[adapter], [version]: checked } },
  };
  await writeFileAtomic(path, serializeLock(next));
  return next;
}

/** The probe records of one adapter, in the shape `PrepareContext.lock` expects. */
export function lockEntries(lock: LockFile, adapter: string): ReadonlyMap<string, LockEntry> {
  return new Map(Object.entries(lock.adapters[adapter] ?? {}));
}

/** The canonical text of a lock: sorted, entry keys in a fixed order, trailing newline. */
export function serializeLock(lock: LockFile): string {
  const adapters: Record<string, Record<string, LockEntry>> = {};
  for (const name of Object.keys(lock.adapters).sort()) {
    const versions = lock.adapters[name] ?? {};
    const ordered: Record<string, LockEntry> = {};
    for (const version of Object.keys(versions).sort(compareVersions)) {
      const { facts, integrity, package: pkg, probedAt } = versions[version]!;
      const sortedFacts = Object.fromEntries(Object.entries(facts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      ordered[version] = { facts: sortedFacts, integrity, package: pkg, probedAt };
    }
    adapters[name] = ordered;
  }
  return `${JSON.stringify({ lockfileVersion: lock.lockfileVersion, adapters }, null, 2)}\n`;
}

// Semver order; keys that are not versions (hand edits) sort after them, by text.
function compareVersions(a: string, b: string): number {
  const [va, vb] = [semver.valid(a), semver.valid(b)];
  if (va && vb) return semver.compare(va, vb);
  if (va || vb) return va ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function lockInvalid(path: string, reason: string, cause: unknown): OneWorksError {
  return new OneWorksError('lock_invalid', `lock file ${path} is malformed: ${reason}; fix it or delete it and probe again`, {
    data: { path },
    cause,
  });
}
