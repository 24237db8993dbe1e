#!/usr/bin/env node
// `npm run build` (also npm's `prepare`: run on `npm ci`, on install from git and on `npm pack`):
// bundles the `one-works` command into dist/cli/ with esbuild, then writes dist/build.json: when
// the build started and which sources it covers. cli/bin.js runs dist/ only while no source is
// newer than that, so an edited checkout never runs a stale build.
//
// One bundle, split at the command table's dynamic imports: cli/main.js plus a chunk per command
// module and chunks for what commands share, with the dependencies (zod, execa, commander, the
// MCP SDK …) inside them. A command so loads a handful of files instead of resolving and
// compiling some 370 modules (sources and node_modules) one by one at each start, and still
// loads only its own code (the MCP SDK only for `mcp`). Type checking is `npm run typecheck`'s
// job (tsc); esbuild only strips the types.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

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
const builtAt = Date.now();
const sources = ['adapters', 'core', 'cli'].flatMap((dir) => listSources(join(root, dir)));
rmSync(join(root, 'dist'), { recursive: true, force: true });
try {
  await build({
    entryPoints: { main: join(root, 'cli', 'main.ts') },
    outdir: join(root, 'dist', 'cli'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Chunks sit next to main.js, so `new URL('../', import.meta.url)` in any of them is dist/
    // (cli/package-root.ts finds the package root from there).
    chunkNames: 'chunk-[hash]',
    // Bundled CommonJS dependencies (npm-registry-fetch, semver …) call require(): give the
    // ESM output one, and __dirname/__filename for those that read files next to themselves.
    banner: {
      js: [
        "import { createRequire as __owCreateRequire } from 'node:module';",
        "import { fileURLToPath as __owFileURLToPath } from 'node:url';",
        "import { dirname as __owDirname } from 'node:path';",
        'const require = __owCreateRequire(import.meta.url);',
        'const __filename = __owFileURLToPath(import.meta.url);',
        'const __dirname = __owDirname(__filename);',
      ].join('\n'),
    },
    // tsx compiles TypeScript at run time for the sources' fallback and the process runners; it
    // is resolved from node_modules, never bundled.
    external: ['tsx', 'tsx/*'],
    plugins: [zodEnglishOnly],
    legalComments: 'none',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
} catch (error) {
  process.stderr.write(`one-works build: esbuild failed (${error instanceof Error ? error.message : String(error)})\n`);
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
