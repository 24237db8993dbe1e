#!/usr/bin/env node
// `npm run build` (also npm's `prepare`: run on `npm ci`, on install from git and on `npm pack`):
// bundles the `one-works` command into dist/cli/main.cjs with esbuild, then writes dist/build.json:
// when the build started, which sources each bundle was made from, and which command names share
// a code cache. cli/bin.cjs runs a bundle only while none of its sources is newer than that, so an
// edited checkout never runs a stale build.
//
// One CommonJS file, not ESM chunks: Node 20 keeps no compiled code for ES modules between runs,
// while a script compiled through node:vm can be given V8's code cache of an earlier run
// (cli/run-build.cjs). With the cache a command skips parsing and compiling what it runs; without
// it, V8 still compiles only the functions that run. The command table's dynamic imports stay
// lazy inside the file (esbuild wraps each module in an init function run on first import), so a
// command still evaluates only its own modules (the MCP SDK only for `mcp`). Type checking is
// `npm run typecheck`'s job (tsc); esbuild only strips the types.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolves and loads packages as the package's own sources do.
const packageRequire = createRequire(join(root, 'package.json'));

// zod re-exports all its ~50 locales as the namespace `z.locales`, which a bundle cannot drop
// (`z` is used as a namespace object): 300 kB, half of zod's chunk, compiled by every command that
// loads zod (all but --version). One Works never calls `z.config(z.locales.xx())`; zod sets
// English itself (classic/schemas.js imports locales/en.js directly). The bundle so gets a
// `locales` namespace holding English alone.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};\n`,
      resolveDir: dirname(args.path),
    }));
  },
};
// Our sources import zod's namespace as `import { z } from 'zod'`, which esbuild bundles as an object
// holding every one of zod's ~980 exports (each a getter): all of zod is kept and set up by every
// command that loads it, while the sources use some twenty of its members. Imported as `import * as
// z` from zod's classic module (the same module `z` is), each `z.member` is bound to that export
// alone, and esbuild drops the schemas and checks no source reaches (zod marks them pure).
const ZOD_NAMESPACE_IMPORT = "import { z } from 'zod';";
const zodNamespaceShaking = {
  name: 'zod-namespace-shaking',
  setup(pluginBuild) {
    const external = join(dirname(packageRequire.resolve('zod')), 'v4', 'classic', 'external.js');
    pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
      if (/[\\/]node_modules[\\/]/.test(args.path)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(ZOD_NAMESPACE_IMPORT)) return undefined;
      return { contents: source.replace(ZOD_NAMESPACE_IMPORT, `import * as z from ${JSON.stringify(external)};`), loader: 'ts' };
    });
  },
};
// core/builtin-require.ts is the bundle's own `require` in the build: its createRequire would load
// node:module, and with it Node's ES module loader and source maps, for every command.
const BUILTIN_REQUIRE = join(root, 'core', 'builtin-require.ts');
const bundleRequire = {
  name: 'bundle-require',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]core[\\/]builtin-require\.ts$/ }, (args) =>
      args.path === BUILTIN_REQUIRE ? { contents: 'export const requireBuiltin = require;\n', loader: 'js' } : undefined,
    );
  },
};
// commander requires node:child_process when it loads, for subcommands that are executables of
// their own (One Works has none): with it come net, dgram and streams, some 6 ms of every command's
// start. The bundle's commander loads it on the first such spawn instead. A commander whose line
// differs fails the build, so that the change is seen (the lockfile pins commander).
const COMMANDER_CHILD_PROCESS = "const childProcess = require('node:child_process');";
const commanderLazyChildProcess = {
  name: 'commander-lazy-child-process',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(COMMANDER_CHILD_PROCESS)) {
        fail(`${args.path} no longer holds ${COMMANDER_CHILD_PROCESS} (see commanderLazyChildProcess in scripts/build.js)`);
      }
      const lazy = "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };";
      return { contents: source.replace(COMMANDER_CHILD_PROCESS, lazy), loader: 'js' };
    });
  },
};
// semver makes its regular expressions as it loads (internal/re.js): some forty patterns put
// together from each other, each rewritten into a "safe" variant by string splits and joins, a few
// ms of every command that validates a pinned CLI version (the config does, at each start). The
// strings depend on nothing at run time, so the bundle gets them as the build computed them with
// semver's own module, and makes the same RegExps from them as it loads. An internal/re.js whose
// exports differ from what this writes fails the build, so that a semver update is seen (the
// lockfile pins semver).
const SEMVER_RE_EXPORTS = ['re', 'safeRe', 'src', 'safeSrc', 't', 'tildeTrimReplace', 'caretTrimReplace', 'comparatorTrimReplace'];
const semverPrebuiltPatterns = {
  name: 'semver-prebuilt-patterns',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]node_modules[\\/]semver[\\/]internal[\\/]re\.js$/ }, (args) => ({
      contents: prebuiltSemverPatterns(args.path),
      loader: 'js',
    }));
  },
};

// The source of a module with the exports of semver's internal/re.js at `path`, its strings
// written out; checked by running it against the module itself.
function prebuiltSemverPatterns(path) {
  const require = createRequire(path);
  const built = require(path);
  if (JSON.stringify(Object.keys(built)) !== JSON.stringify(SEMVER_RE_EXPORTS)) {
    fail(`${path} no longer exports ${SEMVER_RE_EXPORTS.join(', ')} (see semverPrebuiltPatterns in scripts/build.js)`);
  }
  const json = (value) => JSON.stringify(value);
  const contents = `'use strict'
const debug = require('./debug')
const src = ${json(built.src)}
const safeSrc = ${json(built.safeSrc)}
const t = ${json(built.t)}
const flags = ${json(built.re.map((regExp) => regExp.flags))}
for (const [name, index] of Object.entries(t)) debug(name, index, src[index])
module.exports = {
  re: src.map((source, i) => new RegExp(source, flags[i])),
  safeRe: safeSrc.map((source, i) => new RegExp(source, flags[i])),
  src,
  safeSrc,
  t,
${SEMVER_RE_EXPORTS.slice(5)
  .map((name) => `  ${name}: ${json(built[name])},`)
  .join('\n')}
}
`;
  const module = { exports: {} };
  new Function('require', 'module', contents)(require, module);
  // Every export as plain data: a RegExp as its source and flags.
  const plain = (exports) => JSON.stringify(exports, (_key, value) => (value instanceof RegExp ? [value.source, value.flags] : value));
  if (plain(module.exports) !== plain(built)) {
    fail(`the prebuilt patterns of ${path} differ from its own (see semverPrebuiltPatterns in scripts/build.js)`);
  }
  return contents;
}

/**
 * Packages that every bundle leaves to a bundle of their own (dist/cli/chunk-<name>.cjs, with its
 * code cache, cli/run-build.cjs), loaded when one of their exports is first read: yaml is only
 * needed when a config's text changed (core/config/value-cache.ts keeps its parsed value) or a
 * command edits it, pg only for the postgres backend, npm-registry-fetch (with what it brings:
 * make-fetch-happen, cacache, socks, and iconv-lite's 0.5 MB of encoding tables), tar and ssri only
 * to install or look up a CLI. Every command that loads a bundle read all of them and copied them
 * into V8's heap (yaml it also evaluated): 1.4 MB of main.cjs' 3.4, 0.28 of sessions.cjs' 0.84. On
 * a machine where a fresh page of memory costs some 12 µs, that is about a tenth of `sessions`'
 * start beyond `node -e 0`. Only a package that the bundles import by its name alone belongs here
 * (a subpath import would bundle a second copy of its modules).
 */
const CHUNKED_PACKAGES = ['yaml', 'pg', 'npm-registry-fetch', 'tar', 'ssri'];

// The module a bundle gets for a package of CHUNKED_PACKAGES: the package's own export names, each
// a getter that loads its chunk first (esbuild's interop reads a CommonJS module's exports when
// they are used, not when the importing module loads).
function chunkStub(name, chunk) {
  const exported = packageRequire(name);
  // A package that exports a function (npm-registry-fetch) gets one that calls it.
  const callable = typeof exported === 'function';
  const own = callable ? new Set(Object.getOwnPropertyNames(() => undefined).concat('prototype')) : new Set();
  const names = Object.getOwnPropertyNames(exported).filter((key) => key !== '__esModule' && !own.has(key));
  const esModule = Object.hasOwn(exported, '__esModule') ? 'Object.defineProperty(exports,"__esModule",{value:true});' : '';
  const target = callable ? 'module.exports = function (...args) { return load().apply(this, args); };\n' : '';
  return `"use strict";
// ${name}, loaded from ${bundleName(chunk.file)} when one of its exports is first read (CHUNKED_PACKAGES in scripts/build.js).
const nodeRequire = require;
let loaded;
function load() {
  if (loaded === undefined) {
    const { join } = nodeRequire("node:path");
    loaded = nodeRequire(join(__dirname, "..", "..", "cli", "run-build.cjs")).loadBundle(join(__dirname, ${JSON.stringify(`chunk-${name}.cjs`)}), ${JSON.stringify(`chunk-${name}-${chunk.hash}`)});
    if (loaded === undefined) throw new Error(${JSON.stringify(`one-works: ${bundleName(chunk.file)} is missing: run npm run build again`)});
  }
  return loaded;
}
${target}${esModule}for (const name of ${JSON.stringify(names)}) Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name] });
`;
}

// The plugin that gives every bundle the stubs of CHUNKED_PACKAGES (`chunks`: each one's file and hash).
function chunkedPackages(chunks) {
  const filter = new RegExp(`^(${CHUNKED_PACKAGES.join('|')})$`);
  return {
    name: 'chunked-packages',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'chunked' }));
      pluginBuild.onLoad({ filter: /.*/, namespace: 'chunked' }, (args) => ({
        contents: chunkStub(args.path, chunks[args.path]),
        loader: 'js',
      }));
    },
  };
}

/**
 * Command modules with a bundle of their own (dist/cli/<name>.cjs), for the commands of their entry
 * in the command table: `keep`, the command modules the entry loads; `without`, modules their
 * commands never reach (the adapters: every context they make is made with `adapters: false`) and
 * that would otherwise come with them, because a module they share loads them for other commands
 * (each must be a module that is only ever imported dynamically: it is loaded when first used). A smaller bundle is less to read, deserialize (its code cache) and evaluate, and keeps
 * V8's old space small enough that a start-up ends without a mark-compact: `sessions` runs in
 * about 1 MB instead of 3.4. Whatever a bundle leaves out is a module that throws as it loads, so
 * that a command reaching it fails loudly (test/cli/lean-bundle.test.ts runs each such command).
 */
const LEAN_BUNDLES = [
  {
    name: 'sessions',
    keep: ['sessions', 'asks', 'housekeeping'],
    // The adapters, and the installer and command runner that PrepareServices loads on first use.
    without: [
      'cli/adapter-table.ts',
      'core/install/install-package.ts',
      'core/install/install-marker.ts',
      'core/install/npm-config.ts',
      'core/install/resolve-cli.ts',
      'core/process/run-command.ts',
    ],
  },
];

const BUNDLE = join(root, 'dist', 'cli', 'main.cjs');
const EARLY_ENTRY = join(root, 'cli', 'early-intent.ts');
const builtAt = Date.now();
// The package's sources: each bundle's are those of them esbuild read (its metafile's inputs).
const packageSources = new Set(['adapters', 'core', 'cli'].flatMap((dir) => listSources(join(root, dir))));
// Bundle path (as build.json names it) → the sources it was made from.
const sources = {};
// dist/ is never removed nor left half-written while this runs: commands started meanwhile (an
// orchestrator of this checkout, the tests while `npm pack` builds) keep running the previous
// build until the new one is moved into place, files first, dist/build.json last (each through a
// rename), and only then is what the new build does not use removed. Without a build a command
// runs the TypeScript sources through tsx, seconds slower to start on a loaded machine.
const written = [];
// Each package of CHUNKED_PACKAGES → its chunk's file and hash; bundled first, so that the other
// bundles' stubs name the chunk's code cache.
const chunks = {};
for (const name of CHUNKED_PACKAGES) {
  const file = join(root, 'dist', 'cli', `chunk-${name}.cjs`);
  chunks[name] = { file, hash: await bundle(file, [], packageRequire.resolve(name)) };
}
const bundleHash = await bundle(BUNDLE, [
  chunkedPackages(chunks),
  zodEnglishOnly,
  commanderLazyChildProcess,
  semverPrebuiltPatterns,
  bundleRequire,
  zodNamespaceShaking,
]);
// Each command name → the name its code cache is kept under: the first name of its module in the
// command table (commands of one module run the same code).
const { loadBundle } = await import('../cli/run-build.cjs');
const table = loadBundle(`${BUNDLE}.tmp`, undefined).tableCommandNames();
const commands = Object.fromEntries(table.flatMap((names) => names.map((name) => [name, names[0]])));
// Each command name that has a lean bundle → that bundle and its hash.
const lean = {};
for (const spec of LEAN_BUNDLES) {
  const names = table.find((entry) => entry[0] === spec.name);
  if (!names) fail(`LEAN_BUNDLES names ${spec.name}, which is no command of the table`);
  const file = join(root, 'dist', 'cli', `${spec.name}.cjs`);
  const hash = await bundle(file, [
    chunkedPackages(chunks),
    zodEnglishOnly,
    commanderLazyChildProcess,
    semverPrebuiltPatterns,
    leaveOut(spec),
    bundleRequire,
    zodNamespaceShaking,
  ]);
  for (const name of names) lean[name] = { bundle: bundleName(file), bundleHash: hash };
}
// `run`'s early intent (cli/early-intent.ts), a bundle of its own that cli/bin.cjs loads before the
// command's: it finds the state directory's orchestrator and tells it the intent while the
// command's 2 MB load. Only what that needs is in it (the config file's search, not its schema;
// YAML from yaml's chunk when the text changed).
const EARLY_BUNDLE = join(root, 'dist', 'cli', 'early-intent.cjs');
const early = {
  bundle: bundleName(EARLY_BUNDLE),
  bundleHash: await bundle(EARLY_BUNDLE, [chunkedPackages(chunks), bundleRequire], EARLY_ENTRY),
};
const buildJson = join(root, 'dist', 'build.json');
writeFileSync(
  `${buildJson}.tmp`,
  `${JSON.stringify({ builtAt, bundle: bundleName(BUNDLE), bundleHash, commands, lean, early, sources }, null, 1)}\n`,
);
for (const file of [...written, buildJson]) renameSync(`${file}.tmp`, file);
pruneDist();

// Removes from dist/ what this build did not write: files of earlier builds, and every code cache
// (the commands' own runs make them again; `npm pack` builds first, and packs none).
function pruneDist() {
  const kept = new Set([...written, buildJson]);
  for (const entry of readdirSync(join(root, 'dist'), { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && !kept.has(path)) rmSync(path, { force: true });
  }
}

// Bundles `entry` (cli/main.ts by default) into `file` with `plugins`; returns the hash that names
// its code caches, and records the sources it read in `sources`.
async function bundle(file, plugins, entry = join(root, 'cli', 'main.ts')) {
  let bundled;
  try {
    const result = await build({
      entryPoints: [entry],
      // The metafile names the inputs relative to the package root.
      absWorkingDir: root,
      metafile: true,
      outfile: file,
      // Written below, once, whole.
      write: false,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      // The bundle sits in dist/cli/, two levels below the package root as cli/*.ts one level below
      // it: `new URL('../', import.meta.url)` is dist/ (cli/package-root.ts finds the root from
      // there). CommonJS has no import.meta: its url is the bundle's own (defined in the wrapper below).
      define: { 'import.meta.url': '__owImportMetaUrl' },
      // tsx compiles TypeScript at run time for the sources' fallback and the process runners; it
      // is resolved from node_modules, never bundled.
      external: ['tsx', 'tsx/*'],
      plugins,
      legalComments: 'none',
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: 'warning',
    });
    bundled = Buffer.from(result.outputFiles[0].contents).toString('latin1');
    // A left-out module is read from another namespace ("left-out:…"): only the package's own files count.
    sources[bundleName(file)] = Object.keys(result.metafile.inputs)
      .filter((input) => packageSources.has(input))
      .sort();
    // In a lean bundle a warning such as "import will always be undefined" means a left-out module
    // is imported statically, i.e. loaded (and throwing) whatever the command does.
    // The early intent loads before the command: a module that brings zod (the config schema, the
    // wire's schemas) would make it as slow to load as what it runs ahead of.
    if (entry === EARLY_ENTRY && Object.keys(result.metafile.inputs).some((input) => /node_modules[\\/]zod[\\/]/.test(input))) {
      fail(`${file} holds zod: cli/early-intent.ts must import the modules it needs, not ones that load schemas`);
    }
    // A package of CHUNKED_PACKAGES is its chunk's alone: a module of it in another bundle is a second
    // copy, reached by a subpath import (or a package that bundles one).
    if (plugins.some((plugin) => plugin.name === 'chunked-packages')) {
      const copied = Object.keys(result.metafile.inputs).filter((input) =>
        CHUNKED_PACKAGES.some((name) => input.split('\\').join('/').includes(`node_modules/${name}/`)),
      );
      if (copied.length > 0)
        fail(`${file} holds ${copied.slice(0, 3).join(', ')}: a package of CHUNKED_PACKAGES must be imported by its name alone`);
    }
    if (plugins.some((plugin) => plugin.name.startsWith('lean-')) && result.warnings.length > 0) {
      fail(`${file}: esbuild warned (${result.warnings.map((warning) => warning.text).join('; ')}); see LEAN_BUNDLES`);
    }
  } catch (error) {
    fail(`esbuild failed (${error instanceof Error ? error.message : String(error)})`);
  }
  // A lean bundle holding zod's namespace object holds all of zod again: some source imports zod
  // otherwise than as ZOD_NAMESPACE_IMPORT (see zodNamespaceShaking).
  if (plugins.some((plugin) => plugin.name.startsWith('lean-')) && /\bvar external_exports\d*=\{\}/.test(bundled)) {
    fail(`${file} holds zod's whole namespace: import zod as ${ZOD_NAMESPACE_IMPORT} (see zodNamespaceShaking)`);
  }
  // A script run through node:vm with a code cache has no way to import() (Node 20 drops the
  // callback for cached scripts): every import in the sources must be static or one the bundle
  // resolves (the command table's, the adapter table's).
  if (/\bimport\(/.test(bundled)) fail(`${file} calls import(): import that module statically, or from a module esbuild bundles`);
  // cli/run-build.cjs reads the file as latin1, so that V8 keeps it outside its heap: esbuild escapes
  // every other character (its default charset), which this checks.
  if (/[\u0080-\u00ff]/.test(bundled)) fail(`${file} holds a character outside ASCII`);
  // The file holds the bundle inside the wrapper of Node's CommonJS loader, as node:vm compiles it
  // (cli/run-build.cjs): wrapping at each start would copy 3 MB into V8's heap.
  // Strict mode for all of it, as when the sources ran as ES modules.
  const prologue = `"use strict";var __owImportMetaUrl=require("node:url").pathToFileURL(__filename).href;`;
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${prologue}${bundled}\n})`;
  // Moved into place through a rename once every part of the build is ready (see `written`): a
  // command starting meanwhile reads the previous build, never a part of this one.
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, wrapped, 'latin1');
  written.push(file);
  // Names the bundle in its code caches' names: V8 checks a cache against the source's length
  // only, so a process of an earlier build (an orchestrator still running) that writes its cache
  // after this build must not write it where this bundle's commands read theirs.
  return createHash('sha1').update(wrapped).digest('hex').slice(0, 16);
}

// The plugin of a lean bundle (LEAN_BUNDLES): the command table's other modules and the modules
// `without` become modules that throw as they load.
function leaveOut(spec) {
  const leftOut = (what) =>
    `throw new Error(${JSON.stringify(`one-works: ${what} is not in the ${spec.name} commands' bundle (dist/cli/${spec.name}.cjs); add it there (LEAN_BUNDLES in scripts/build.js) or run the command from dist/cli/main.cjs`)});\n`;
  const without = new Set(spec.without.map((path) => join(root, path)));
  return {
    name: `lean-${spec.name}`,
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^\.\/commands\/[^/]+\.js$/ }, (args) => {
        if (args.importer !== join(root, 'cli', 'command-table.ts')) return undefined;
        const name = args.path.slice('./commands/'.length, -'.js'.length);
        return spec.keep.includes(name) ? undefined : { path: `cli/commands/${name}.ts`, namespace: 'left-out' };
      });
      pluginBuild.onLoad({ filter: /\.ts$/ }, (args) =>
        without.has(args.path) ? { contents: leftOut(relative(root, args.path)), loader: 'js' } : undefined,
      );
      pluginBuild.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({ contents: leftOut(args.path), loader: 'js' }));
    },
  };
}

// How build.json names a file of the package: relative to its root, `/`-separated.
function bundleName(file) {
  return relative(root, file).split('\\').join('/');
}

function fail(message) {
  process.stderr.write(`one-works build: ${message}\n`);
  process.exit(1);
}

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
