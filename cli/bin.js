#!/usr/bin/env node
// Entry point of the `one-works` command. It runs the JavaScript that `npm run build` compiled
// into dist/ (npm runs the build on `npm ci`, on install from git and on `npm pack`, so a
// checkout, a global install and a packed tarball all have it). When there is no build, or a
// source file is newer than the build (a checkout being edited, e.g. while its tests run), it
// loads the TypeScript sources through tsx instead, which is slower to start but never stale.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);

// True when dist/ holds a build that no source file is newer than (one stat per source file).
function buildIsCurrent() {
  let build;
  try {
    build = JSON.parse(readFileSync(new URL('dist/build.json', root), 'utf8'));
  } catch {
    return false;
  }
  for (const file of build.sources) {
    try {
      if (statSync(new URL(file, root)).mtimeMs > build.builtAt) return false;
    } catch {
      return false;
    }
  }
  return true;
}

let main;
if (buildIsCurrent()) {
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('./main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
