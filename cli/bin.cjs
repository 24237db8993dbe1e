#!/usr/bin/env node
// Entry point of the `one-works` command. It runs the JavaScript that `npm run build` bundled
// into dist/ (npm runs the build on `npm ci`, on install from git and on `npm pack`, so a
// checkout, a global install and a packed tarball all have it), with a V8 code cache per command
// (cli/run-build.cjs). When there is no build, or a source file of the bundle the command runs is
// newer than the build (a checkout being edited, e.g. while its tests run), it loads the
// TypeScript sources through tsx instead, which is slower to start but never stale.
//
// CommonJS, not an ES module: Node loads its ESM loader for an ES module entry, some 6 ms of every
// command's start (cli/bin.js, the entry of earlier versions, runs this file).
'use strict';

const { readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

// The package root as a path ending in a separator: source paths are appended as strings (a URL
// per source file cost more than the stat itself).
const root = join(__dirname, '..', '/');

// An installed package (below node_modules) is not edited, and npm gives its files the mtime of
// the install, later than the build: only a checkout's sources are compared with its build.
const installed = /[\\/]node_modules[\\/]/.test(root);

// dist/build.json, or undefined when dist/ holds no build.
function readBuild() {
  try {
    return JSON.parse(readFileSync(`${root}dist/build.json`, 'utf8'));
  } catch {
    return undefined;
  }
}

// True when no source `bundle` was made from is newer than the build (one stat per source file in
// a checkout): an edit elsewhere (e.g. to an adapter, for the sessions bundle) leaves it current.
function isCurrent(build, bundle) {
  if (installed) return true;
  const sources = build.sources?.[bundle];
  // A build.json of an earlier format lists no sources per bundle: treated as stale.
  if (!Array.isArray(sources)) return false;
  for (const file of sources) {
    const stats = statSync(root + file, { throwIfNoEntry: false });
    if (stats === undefined || stats.mtimeMs > build.builtAt) return false;
  }
  return true;
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

// cli/early-intent.ts's bundle for `run`, and for a `serve` started with an intent (undefined for
// any other command line, or without a current build).
function loadEarly(build, command, args) {
  const wanted = command === 'run' || (command === 'serve' && args.includes('--intent'));
  if (!wanted || !build?.early || !isCurrent(build, build.early.bundle)) return undefined;
  try {
    const { cacheDirectory, loadBundle } = require('./run-build.cjs');
    const early = loadBundle(root + build.early.bundle, `early-intent-${build.early.bundleHash}`);
    early?.useConfigValueCache?.(cacheDirectory(root + build.early.bundle));
    return early;
  } catch {
    return undefined;
  }
}

// A plain `run` handed to the orchestrator that listens for it (see delegateRun in
// cli/early-intent.ts): resolves with its exit code, or undefined when the command is this
// process's to run.
function delegate(early, args) {
  try {
    return early?.delegateRun(args, process.env, process.cwd()) ?? Promise.resolve(undefined);
  } catch {
    return Promise.resolve(undefined);
  }
}

// In a server started with an intent, that intent's agent spawned now, before the command's bundle
// loads, when the previous server of its state directory left a recipe for exactly this build,
// config, intent and environment (see launchAheadForServer in cli/early-intent.ts).
function launchAhead(early, args, build) {
  try {
    early?.launchAheadForServer(args, process.env, process.cwd(), build.bundleHash);
  } catch {
    // The orchestrator launches it as always.
  }
}

// `run`'s intent, told to a running orchestrator before the command's bundle loads, or with the
// spawn of the server it starts when none runs (see cli/early-intent.ts): undefined for any other
// command, without a current build, or when nothing was told. The command takes the connection
// (or the server) over, or discards it.
function tellEarlyIntent(early, args) {
  try {
    return early?.tellEarlyIntent(args, process.env, process.cwd());
  } catch {
    // The command tells its intent itself.
    return undefined;
  }
}

// The `main` of the build when it is current, else of the sources (through tsx), with its
// `outputWritten` (cli/stdio.ts).
async function loadMain(build, command) {
  // A command with a lean bundle of its own (scripts/build.js, LEAN_BUNDLES) runs that one.
  const lean = build && command !== undefined && Object.hasOwn(build.lean ?? {}, command) ? build.lean[command] : undefined;
  const { bundle, bundleHash } = lean ?? build ?? {};
  if (build && isCurrent(build, bundle)) {
    const { cacheDirectory, loadBundle } = require('./run-build.cjs');
    // Only a command of the table has a cache (help and unknown commands run without one), named
    // after its module and this very bundle.
    const cacheName =
      command !== undefined && Object.hasOwn(build.commands, command) ? `${build.commands[command]}-${bundleHash}` : undefined;
    // Undefined when the bundle went away after build.json was read (a build under way): the sources then.
    const loaded = loadBundle(root + bundle, cacheName);
    // A build's commands keep their config's parsed value beside their code caches.
    if (loaded?.main) {
      const cacheDir = cacheDirectory(root + bundle);
      return {
        main: (argv, options) => loaded.main(argv, { ...options, configValueCache: cacheDir }),
        outputWritten: loaded.outputWritten,
      };
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  return await import('./main.ts');
}

// True when the process may exit as soon as the command's main returns and its output is written: a
// command of a lean bundle (`sessions`, `events`, `asks`, `answer`) has then done all its work.
// Otherwise Node would first run every task V8 queued: the allocations of a start-up leave a
// scavenge of some 2 ms queued behind the output of `sessions`.
function exitsOnReturn(build, command) {
  return command !== undefined && Object.hasOwn(build?.lean ?? {}, command);
}

// Exits once the command's stdout and stderr have written what they hold (`outputWritten` of the
// bundle that wrote them, cli/stdio.ts): a pipe that its reader has not emptied yet keeps the rest
// in a stream, which process.exit() alone would drop. The bundle is of the same build as this file
// (a checkout runs a build only while no source is newer; a package ships both).
function exitWhenWritten(outputWritten) {
  outputWritten().then(
    () => process.exit(),
    () => process.exit(),
  );
}

// A `run` whose early intent started its server, handed to that server once it listens (see
// delegateStartedRun in cli/early-intent.ts): resolves with its exit code, or undefined when the
// command is this process's to run.
function delegateStarted(early, earlyIntent, args) {
  try {
    return early?.delegateStartedRun(earlyIntent, args, process.env, process.cwd()) ?? Promise.resolve(undefined);
  } catch {
    return Promise.resolve(undefined);
  }
}

// Loads the command and runs it in this process, with `run`'s early intent (told, or its server started) when there is one.
function runHere(build, command, args, earlyIntent) {
  // The intent is written (or the server started) before the command's bundle loads (a synchronous 20 ms or more).
  return (earlyIntent ? earlyIntent.sent : Promise.resolve())
    .then(() => loadMain(build, command))
    .then(
      async ({ main, outputWritten }) => {
        process.exitCode = await main(args, earlyIntent ? { earlyIntent } : {});
        if (exitsOnReturn(build, command)) exitWhenWritten(outputWritten);
      },
      (error) => {
        // As an ES module entry's rejected top-level await: the error on stderr, exit code 1.
        process.exitCode = 1;
        throw error;
      },
    );
}

// A command handed over is done (its connection closed): nothing else of this process runs, and it
// exits when its output is written, without the queued collection a natural exit waits for.
function handedOver(early, exitCode) {
  process.exitCode = exitCode;
  exitWhenWritten(early.outputWritten);
}

// `one-works --version` alone: the version from package.json, as the full command line prints it,
// without loading the command tree.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`);
} else {
  const build = readBuild();
  const command = commandName(args);
  const early = loadEarly(build, command, args);
  if (command === 'serve') launchAhead(early, args, build);
  delegate(early, args).then((exitCode) => {
    if (exitCode !== undefined) return handedOver(early, exitCode);
    const earlyIntent = tellEarlyIntent(early, args);
    return delegateStarted(early, earlyIntent, args).then((startedExitCode) =>
      startedExitCode !== undefined ? handedOver(early, startedExitCode) : runHere(build, command, args, earlyIntent),
    );
  });
}
