import { createHash } from 'node:crypto';
import { copyFile, lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { OneWorksError } from '../../core/errors.js';

/**
 * Checkpoints of a runner's native directory. After each settled prompt the runner names its
 * files (relative paths, exact byte sizes); One Works verifies them — regular files inside the
 * directory (no `..`, no absolute path, no symlink), the exact size, append-only against the
 * previous checkpoint, no registered secret in them — and copies them into its own checkpoint
 * store (outside the session HOME, which the runner can write). A session whose native
 * directory is missing or empty is restored from its latest checkpoint before `open`.
 */

const FileSchema = z.strictObject({ path: z.string(), size: z.number().int().nonnegative(), sha256: z.string() });
export const ManifestSchema = z.strictObject({ runId: z.string(), at: z.string(), files: z.array(FileSchema) });
export type CheckpointManifest = z.infer<typeof ManifestSchema>;

const LATEST = 'latest.json';

const refuse = (message: string): OneWorksError => new OneWorksError('protocol_error', `checkpoint refused: ${message}`);

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The latest recorded checkpoint in `store`, or undefined when none was recorded. */
export async function readLatest(store: string): Promise<CheckpointManifest | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(store, LATEST), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return ManifestSchema.parse(JSON.parse(text));
}

export interface RecordOptions {
  /** The runner's native directory. */
  dir: string;
  /** Where this session's checkpoints are kept. */
  store: string;
  runId: string;
  /** What the runner said. */
  files: ReadonlyArray<{ path: string; size: number }>;
  previous: CheckpointManifest | undefined;
  /** True when the text holds a registered secret. */
  hasSecret: (text: string) => boolean;
}

/**
 * Verifies the files the runner named and records them as the checkpoint of `runId`. Throws
 * OneWorksError `protocol_error` ("checkpoint refused: …", naming the file) when a file fails a
 * check; nothing is recorded then and the previous checkpoint stays the latest.
 */
export async function recordCheckpoint(options: RecordOptions): Promise<CheckpointManifest> {
  const realDir = await realpath(options.dir);
  const seen = new Set<string>();
  const files: Array<{ path: string; size: number; sha256: string; bytes: Buffer }> = [];
  for (const file of options.files) {
    const relative = path.normalize(file.path);
    if (path.isAbsolute(file.path) || relative === '..' || relative.startsWith(`..${path.sep}`) || relative === '.') {
      throw refuse(`${JSON.stringify(file.path)} is not a relative path inside the runner's directory`);
    }
    if (seen.has(relative)) throw refuse(`${JSON.stringify(file.path)} is named twice`);
    seen.add(relative);
    const full = path.join(realDir, relative);
    const info = await lstat(full).catch(() => undefined);
    if (!info) throw refuse(`${JSON.stringify(file.path)} does not exist in the runner's directory`);
    if (!info.isFile() || (await realpath(full)) !== full) throw refuse(`${JSON.stringify(file.path)} is not a regular file`);
    const bytes = await readFile(full);
    if (bytes.length !== file.size) throw refuse(`${JSON.stringify(file.path)} has ${bytes.length} bytes, the runner said ${file.size}`);
    if (options.hasSecret(bytes.toString('utf8'))) throw refuse(`${JSON.stringify(file.path)} contains a credential`);
    files.push({ path: relative, size: bytes.length, sha256: sha256(bytes), bytes });
  }
  for (const before of options.previous?.files ?? []) {
    const now = files.find((f) => f.path === before.path);
    if (!now) throw refuse(`${JSON.stringify(before.path)} of the previous checkpoint is missing (checkpoints are append-only)`);
    if (now.size < before.size || sha256(now.bytes.subarray(0, before.size)) !== before.sha256) {
      throw refuse(`${JSON.stringify(before.path)} was rewritten, not appended to (checkpoints are append-only)`);
    }
  }
  const manifest: CheckpointManifest = {
    runId: options.runId,
    at: new Date().toISOString(),
    files: files.map(({ path: p, size, sha256: hash }) => ({ path: p, size, sha256: hash })),
  };
  // Written aside, then moved into place: a crash leaves the previous checkpoint the latest.
  const target = path.join(options.store, options.runId);
  const staging = `${target}.tmp`;
  await rm(staging, { recursive: true, force: true });
  for (const file of files) {
    await mkdir(path.dirname(path.join(staging, 'files', file.path)), { recursive: true, mode: 0o700 });
    await writeFile(path.join(staging, 'files', file.path), file.bytes, { mode: 0o600 });
  }
  await mkdir(staging, { recursive: true, mode: 0o700 });
  await writeFile(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`, { mode: 0o600 });
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  await writeFile(path.join(options.store, `${LATEST}.tmp`), JSON.stringify(manifest), { mode: 0o600 });
  await rename(path.join(options.store, `${LATEST}.tmp`), path.join(options.store, LATEST));
  return manifest;
}

/**
 * Restores the latest checkpoint into `dir` when `dir` is missing or empty. Resolves with the
 * restored manifest, or undefined when nothing was restored (the directory has content, or no
 * checkpoint exists). Throws `state_corrupt` when a recorded file does not match its manifest.
 */
export async function restoreIfEmpty(store: string, dir: string): Promise<CheckpointManifest | undefined> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.length > 0) return undefined;
  const latest = await readLatest(store);
  if (!latest) return undefined;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const file of latest.files) {
    const source = path.join(store, latest.runId, 'files', file.path);
    const bytes = await readFile(source);
    if (bytes.length !== file.size || sha256(bytes) !== file.sha256) {
      throw new OneWorksError('state_corrupt', `checkpoint ${latest.runId}: ${file.path} does not match its manifest (${source})`);
    }
    await mkdir(path.dirname(path.join(dir, file.path)), { recursive: true, mode: 0o700 });
    await copyFile(source, path.join(dir, file.path));
  }
  return latest;
}

/**
 * A fork's native state (`one-works fork`): copies the checkpoint of the latest of `runs` that has
 * one from `sourceStore` into `targetStore`, where it becomes the latest (the fork's runner
 * directory is then restored from it before its first `open`). Each file is verified against the
 * source manifest first; the source is only read. Resolves with the copied manifest, or
 * undefined when none of `runs` has a checkpoint. Throws `state_corrupt` on a mismatch.
 */
export async function copyCheckpoint(
  sourceStore: string,
  runs: readonly string[],
  targetStore: string,
): Promise<CheckpointManifest | undefined> {
  for (const runId of [...runs].reverse()) {
    const text = await readFile(path.join(sourceStore, runId, 'manifest.json'), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const manifest = ManifestSchema.parse(JSON.parse(text));
    const staging = path.join(targetStore, `${runId}.tmp`);
    await rm(staging, { recursive: true, force: true });
    for (const file of manifest.files) {
      const source = path.join(sourceStore, runId, 'files', file.path);
      const bytes = await readFile(source);
      if (bytes.length !== file.size || sha256(bytes) !== file.sha256) {
        await rm(staging, { recursive: true, force: true });
        throw new OneWorksError('state_corrupt', `checkpoint ${runId}: ${file.path} does not match its manifest (${source})`);
      }
      await mkdir(path.dirname(path.join(staging, 'files', file.path)), { recursive: true, mode: 0o700 });
      await writeFile(path.join(staging, 'files', file.path), bytes, { mode: 0o600 });
    }
    await mkdir(staging, { recursive: true, mode: 0o700 });
    await writeFile(path.join(staging, 'manifest.json'), text, { mode: 0o600 });
    await rename(staging, path.join(targetStore, runId));
    await writeFile(path.join(targetStore, LATEST), JSON.stringify(manifest), { mode: 0o600 });
    return manifest;
  }
  return undefined;
}
