import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, buildPackage, copyPackage } from '../support/package-copy.js';

// `npm run build` (npm's prepare, also run by `npm pack`) rebuilds dist/ while commands of the
// same checkout may be starting: an orchestrator it auto-starts, the tests beside `npm pack`. A
// command that finds no build runs the TypeScript sources through tsx, seconds slower on a loaded
// machine (CI saw an auto-started server miss the client's deadline that way). So the build never
// removes dist/ first: the previous build stays whole until the new one is moved into place.
// Built here in a copy of the package (the checkout's own dist/ may be in use).

let root: string;
let pkg: string;

beforeAll(async () => {
  ({ root, pkg } = await copyPackage('ow-build-in-place-'));
  const built = await buildPackage(pkg);
  expect(built.exitCode, built.stderr).toBe(0);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('npm run build over an existing build', () => {
  it(
    'keeps a whole build in dist/ at every moment, then removes what the new build did not write',
    async () => {
      const dist = join(pkg, 'dist');
      const { bundleHash } = JSON.parse(await readFile(join(dist, 'build.json'), 'utf8')) as { bundleHash: string };
      // What an earlier build left: a bundle no longer built, and code caches of this bundle and of another.
      const caches = join(dist, 'cli', 'code-cache');
      await mkdir(caches, { recursive: true });
      const current = join(caches, `sessions-${bundleHash}-${process.version}-${process.arch}.bin`);
      const stale = join(caches, `sessions-0123456789abcdef-${process.version}-${process.arch}.bin`);
      await writeFile(current, 'cache of this bundle');
      await writeFile(stale, 'cache of an earlier bundle');
      await writeFile(join(dist, 'cli', 'retired.cjs'), '// a bundle an earlier build wrote');

      // Polled as fast as this process can while the build runs: a command starting at any of
      // these moments must find build.json (whole) and the bundle it names.
      const missing: string[] = [];
      let looks = 0;
      const building = buildPackage(pkg);
      let done = false;
      void building.finally(() => {
        done = true;
      });
      while (!done) {
        looks += 1;
        try {
          const build = JSON.parse(readFileSync(join(dist, 'build.json'), 'utf8')) as { bundle: string };
          if (!existsSync(join(pkg, build.bundle))) missing.push(`${build.bundle} (named by build.json)`);
        } catch (error) {
          missing.push(`build.json: ${error instanceof Error ? error.message : String(error)}`);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      const built = await building;
      expect(built.exitCode, built.stderr).toBe(0);
      expect(looks).toBeGreaterThan(10);
      expect(missing.slice(0, 3)).toEqual([]);

      // The rebuilt package keeps nothing an earlier build or run left: no bundle it no longer
      // builds, no code cache (`npm pack` builds first and must pack none; runs make them again).
      expect(existsSync(current)).toBe(false);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(join(dist, 'cli', 'retired.cjs'))).toBe(false);
      expect((await readdir(join(dist, 'cli'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      const version = await execa(process.execPath, [join(pkg, 'cli', 'bin.cjs'), '--version'], { reject: false, stdin: 'ignore' });
      expect(version.exitCode, version.stderr).toBe(0);
    },
    BUILD_TIMEOUT_MS,
  );
});
