#!/usr/bin/env node
// Entry point of the `one-works` command. It runs the JavaScript that `npm run build` compiled
// into dist/ (npm runs the build on `npm ci`, on install from git and on `npm pack`, so a
// checkout, a global install and a packed tarball all have it). When there is no build, or a
// source file is newer than the build (a checkout being edited, e.g. while its tests run), it
// loads the TypeScript sources through tsx instead, which is slower to start but never stale.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The package root as a path ending in a separator: source paths are appended as strings (a URL
// per source file cost more than the stat itself).
const root = fileURLToPath(new URL('../', import.meta.url));

// True when dist/ holds a build that no source file is newer than (one stat per source file).
function buildIsCurrent() {
  let build;
  try {
    build = JSON.parse(readFileSync(`${root}dist/build.json`, 'utf8'));
  } catch {
    return false;
  }
  for (const file of build.sources) {
    const stats = statSync(root + file, { throwIfNoEntry: false });
    if (stats === undefined || stats.mtimeMs > build.builtAt) return false;
  }
  return true;
}

// `one-works --version` alone: the version from package.json, as the full command line prints it,
// without loading the command tree.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`);
} else {
  let main;
  if (buildIsCurrent()) {
    ({ main } = await import('../dist/cli/main.js'));
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import('./main.ts'));
  }
  process.exitCode = await main(args);
}
