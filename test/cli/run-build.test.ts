import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { crc32 } from 'node:zlib';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// cli/run-build.cjs: the build's bundle runs through node:vm with a V8 code cache per command.
// Each run is its own node process (as each command is), on a small bundle in the build's shape
// (a CommonJS body inside the loader's wrapper) whose functions V8 compiles and caches.
const RUN_BUILD = pathToFileURL(fileURLToPath(new URL('../../cli/run-build.cjs', import.meta.url))).href;
const DIGEST_BYTES = 4;

let dir: string;
let bundle: string;
let cacheFile: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-run-build-'));
  await mkdir(join(dir, 'dist', 'cli'), { recursive: true });
  bundle = join(dir, 'dist', 'cli', 'main.cjs');
  const body = [
    '"use strict";',
    'const { join } = require("node:path");',
    ...Array.from({ length: 50 }, (_, i) => `function part${i}(n) { return n * ${i} + ${i}; }`),
    `exports.main = (args) => [join("a", args[0]), ${Array.from({ length: 50 }, (_, i) => `part${i}(${i})`).join(' + ')}].join(" ");`,
  ].join('\n');
  await writeFile(bundle, `(function (exports, require, module, __filename, __dirname) {${body}\n})`);
  cacheFile = join(dir, 'dist', 'cli', 'code-cache', `demo-${process.version}-${process.arch}.bin`);
  await writeFile(
    join(dir, 'driver.mjs'),
    `import { loadBundle } from ${JSON.stringify(RUN_BUILD)};\nprocess.stdout.write(loadBundle(${JSON.stringify(bundle)}, 'demo').main(['b']));\n`,
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const EXPECTED = `a/b ${Array.from({ length: 50 }, (_, i) => i * i + i).reduce((a, b) => a + b, 0)}`;

// One command: a fresh node running the bundle (with extra V8 flags when given).
async function runOnce(flags: string[] = []): Promise<string> {
  // No NODE_OPTIONS from the test's own environment: they would tag the cache's name.
  const result = await execa(process.execPath, [...flags, join(dir, 'driver.mjs')], {
    env: { NODE_OPTIONS: '' },
    reject: false,
    stdin: 'ignore',
  });
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  return result.stdout;
}

// True when the file starts with the CRC-32 of the rest, little-endian (the loader's format).
async function digestHolds(file: string): Promise<boolean> {
  const data = await readFile(file);
  return data.length > DIGEST_BYTES && crc32(data.subarray(DIGEST_BYTES)) === data.readUInt32LE(0);
}

describe('loadBundle', () => {
  it('writes the code cache at the end of the first run and reuses it, unchanged, in the next', async () => {
    expect(await runOnce()).toBe(EXPECTED);
    expect(await digestHolds(cacheFile)).toBe(true);
    const first = await stat(cacheFile);
    expect(await runOnce()).toBe(EXPECTED);
    // V8 took the cache: it was not written again.
    const second = await stat(cacheFile);
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
  });

  it('writes no cache at the end of a failing run (it compiled little), and does at the end of the next successful one', async () => {
    // A run that stops early with a non-zero status, as a command refusing its input does.
    await writeFile(
      join(dir, 'failing.mjs'),
      `import { loadBundle } from ${JSON.stringify(RUN_BUILD)};\nloadBundle(${JSON.stringify(bundle)}, 'demo');\nprocess.exitCode = 3;\n`,
    );
    const failed = await execa(process.execPath, [join(dir, 'failing.mjs')], { env: { NODE_OPTIONS: '' }, reject: false, stdin: 'ignore' });
    expect(failed.exitCode).toBe(3);
    await expect(stat(cacheFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await runOnce()).toBe(EXPECTED);
    expect(await digestHolds(cacheFile)).toBe(true);
  });

  it('ignores a damaged cache (V8 would crash on it) and replaces it', async () => {
    await runOnce();
    const data = await readFile(cacheFile);
    for (let i = data.length - 200; i < data.length; i += 1) data[i] = data[i]! ^ 0x5a;
    await writeFile(cacheFile, data);
    expect(await digestHolds(cacheFile)).toBe(false);
    expect(await runOnce()).toBe(EXPECTED);
    expect(await digestHolds(cacheFile)).toBe(true);
  });

  it('ignores a truncated cache and replaces it', async () => {
    await runOnce();
    await writeFile(cacheFile, (await readFile(cacheFile)).subarray(0, DIGEST_BYTES - 1));
    expect(await runOnce()).toBe(EXPECTED);
    expect(await digestHolds(cacheFile)).toBe(true);
  });

  it('keeps a cache per set of Node options, and replaces one V8 refuses (made under other V8 flags)', async () => {
    expect(await runOnce(['--no-opt'])).toBe(EXPECTED);
    const [flagged] = (await readdir(join(dir, 'dist', 'cli', 'code-cache'))).filter((name) => name !== basename(cacheFile));
    expect(flagged).toMatch(new RegExp(`^demo-${process.version}-${process.arch}-[0-9a-f]{8}\\.bin$`));
    expect(await runOnce()).toBe(EXPECTED);
    expect(await readdir(join(dir, 'dist', 'cli', 'code-cache'))).toHaveLength(2);
    // The other flags' cache where this run looks: V8 refuses it, the run goes on and remakes it.
    const other = await readFile(join(dir, 'dist', 'cli', 'code-cache', flagged!));
    await writeFile(cacheFile, other);
    expect(await runOnce()).toBe(EXPECTED);
    expect((await readFile(cacheFile)).equals(other)).toBe(false);
    expect(await digestHolds(cacheFile)).toBe(true);
    const mine = await stat(cacheFile);
    expect(await runOnce()).toBe(EXPECTED);
    expect((await stat(cacheFile)).mtimeMs).toBe(mine.mtimeMs);
  });

  it('checks and writes digests with node:zlib where its binding would warn (pending deprecations), without a warning', async () => {
    // No warning: runOnce fails on any stderr (process.binding warns under --pending-deprecation).
    expect(await runOnce(['--pending-deprecation'])).toBe(EXPECTED);
    const [flagged] = await readdir(join(dir, 'dist', 'cli', 'code-cache'));
    const file = join(dir, 'dist', 'cli', 'code-cache', flagged!);
    expect(await digestHolds(file)).toBe(true);
    const made = await stat(file);
    expect(await runOnce(['--pending-deprecation'])).toBe(EXPECTED);
    // Its digest checked and the cache taken: not written again.
    expect((await stat(file)).mtimeMs).toBe(made.mtimeMs);
  });

  it('answers undefined for a bundle that is not there (a build under way), so that bin.cjs runs the sources', async () => {
    await writeFile(
      join(dir, 'missing.mjs'),
      `import { loadBundle } from ${JSON.stringify(RUN_BUILD)};\nprocess.stdout.write(String(loadBundle(${JSON.stringify(join(dir, 'none.cjs'))}, 'demo')));\n`,
    );
    const result = await execa(process.execPath, [join(dir, 'missing.mjs')], { reject: false, stdin: 'ignore' });
    expect([result.exitCode, result.stdout, result.stderr]).toEqual([0, 'undefined', '']);
  });

  it('runs without a cache where it cannot write one', async () => {
    // A file where the cache directory would be: mkdir fails whoever runs the test (root too).
    await writeFile(join(dir, 'dist', 'cli', 'code-cache'), 'not a directory');
    expect(await runOnce()).toBe(EXPECTED);
    expect(await runOnce()).toBe(EXPECTED);
    expect(await readFile(join(dir, 'dist', 'cli', 'code-cache'), 'utf8')).toBe('not a directory');
  });
});
