#!/usr/bin/env node
// `npm run build` (also npm's `prepare`: run on `npm ci`, on install from git and on `npm pack`):
// compiles cli/, core/ and adapters/ to JavaScript in dist/ with tsc, then writes
// dist/build.json: when the build started and which sources it compiled. cli/bin.js runs dist/
// only while no source is newer than that, so an edited checkout never runs a stale build.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const builtAt = Date.now();
const sources = ['adapters', 'core', 'cli'].flatMap((dir) => listSources(join(root, dir)));
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) {
  process.stderr.write(`one-works build: tsc failed (${result.signal ?? `exit ${result.status}`})\n`);
  process.exit(1);
}
writeFileSync(join(root, 'dist', 'build.json'), `${JSON.stringify({ builtAt, sources }, null, 1)}\n`);

// The .ts files below `dir` (relative to the package root, `/`-separated), tests excluded.
function listSources(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) =>
      relative(root, join(entry.parentPath ?? entry.path, entry.name))
        .split('\\')
        .join('/'),
    )
    .sort();
}
