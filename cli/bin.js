#!/usr/bin/env node
// Entry point of the `one-works` command. It runs the JavaScript that `npm run build` bundled
// into dist/ (npm runs the build on `npm ci`, on install from git and on `npm pack`, so a
// checkout, a global install and a packed tarball all have it), with a V8 code cache per command
// (cli/run-build.js). When there is no build, or a source file is newer than the build (a
// checkout being edited, e.g. while its tests run), it loads the TypeScript sources through tsx
// instead, which is slower to start but never stale.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The package root as a path ending in a separator: source paths are appended as strings (a URL
// per source file cost more than the stat itself).
const root = fileURLToPath(new URL('../', import.meta.url));

// An installed package (below node_modules) is not edited, and npm gives its files the mtime of
// the install, later than the build: only a checkout's sources are compared with its build.
const installed = /[\\/]node_modules[\\/]/.test(root);

// dist/build.json when dist/ holds a build that no source file is newer than (one stat per source
// file in a checkout), else undefined.
function currentBuild() {
  let build;
  try {
    build = JSON.parse(readFileSync(`${root}dist/build.json`, 'utf8'));
  } catch {
    return undefined;
  }
  if (installed) return build;
  for (const file of build.sources) {
    const stats = statSync(root + file, { throwIfNoEntry: false });
    if (stats === undefined || stats.mtimeMs > build.builtAt) return undefined;
  }
  return build;
}

// The command named on the command line (the first argument that is not an option or the value of
// -c/--config), as cli/command-table.ts finds it.
function commandName(argv) {
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--') return undefined;
    if (argv[i] === '-c' || argv[i] === '--config') i += 1;
    else if (!argv[i].startsWith('-')) return argv[i];
  }
  return undefined;
}

// `one-works --version` alone: the version from package.json, as the full command line prints it,
// without loading the command tree.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`);
} else {
  let main;
  const build = currentBuild();
  if (build) {
    const { loadBundle } = await import('./run-build.js');
    // Only a command of the table has a cache (help and unknown commands run without one), named
    // after its module and this very bundle.
    const command = commandName(args);
    const cacheName =
      command !== undefined && Object.hasOwn(build.commands, command) ? `${build.commands[command]}-${build.bundleHash}` : undefined;
    // Undefined when the bundle went away after build.json was read (a build under way): the sources then.
    main = loadBundle(root + build.bundle, cacheName)?.main;
  }
  if (!main) {
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import('./main.ts'));
  }
  process.exitCode = await main(args);
}
