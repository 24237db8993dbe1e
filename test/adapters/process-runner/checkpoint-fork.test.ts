import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyCheckpoint, readLatest, recordCheckpoint, restoreIfEmpty } from '../../../adapters/process-runner/checkpoint.js';

// copyCheckpoint (the fork of a runner session): the latest checkpoint among the fork point's
// runs is copied, verified against its manifest, and becomes the fork's latest; the source is
// only read. Proven end to end with the reference runner in process-runner-fork.test.ts.

let root: string;
let dir: string;
let source: string;
let target: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ow-runner-fork-')));
  dir = join(root, 'dir');
  source = join(root, 'source');
  target = join(root, 'target');
  await mkdir(dir);
});
afterEach(() => rm(root, { recursive: true, force: true }));

async function record(runId: string, content: string): Promise<void> {
  await writeFile(join(dir, 'state.jsonl'), content);
  await recordCheckpoint({
    dir,
    store: source,
    runId,
    files: [{ path: 'state.jsonl', size: Buffer.byteLength(content) }],
    previous: await readLatest(source),
    hasSecret: () => false,
  });
}

describe('copyCheckpoint', () => {
  it('copies the latest checkpoint among the given runs; restoring the copy gives those bytes', async () => {
    await record('r1', 'one\n');
    await record('r2', 'one\ntwo\n');
    const copied = await copyCheckpoint(source, ['r1', 'r3'], target);
    expect(copied?.runId).toBe('r1');
    expect((await readLatest(target))?.runId).toBe('r1');
    const fresh = join(root, 'fresh');
    await restoreIfEmpty(target, fresh);
    expect(await readFile(join(fresh, 'state.jsonl'), 'utf8')).toBe('one\n');
    // The source's latest is still r2.
    expect((await readLatest(source))?.runId).toBe('r2');
  });

  it('resolves undefined when none of the runs has a checkpoint', async () => {
    await record('r1', 'one\n');
    expect(await copyCheckpoint(source, ['r2'], target)).toBeUndefined();
    expect(await readLatest(target)).toBeUndefined();
  });

  it('refuses a checkpoint whose file no longer matches its manifest (state_corrupt), recording nothing', async () => {
    await record('r1', 'one\n');
    await writeFile(join(source, 'r1', 'files', 'state.jsonl'), 'ONE\n');
    await expect(copyCheckpoint(source, ['r1'], target)).rejects.toMatchObject({ code: 'state_corrupt' });
    expect(await readLatest(target)).toBeUndefined();
  });
});
