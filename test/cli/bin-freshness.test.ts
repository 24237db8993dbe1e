import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, buildPackage, copyPackage } from '../support/package-copy.js';

// cli/bin.cjs runs a bundle of dist/ only while none of the sources it was made from (build.json
// lists them per bundle) is newer than the build; else the TypeScript sources through tsx. An edit
// to a source of the bundle a command runs is picked up at once; an edit to a source that bundle
// does not hold (an adapter, for the sessions bundle) leaves it running the build. Built here in a
// copy of the package (the checkout's own dist/ may be stale or in use).

let root: string;
let pkg: string;
let config: string;
let build: { bundle: string; lean: Record<string, { bundle: string }>; sources: Record<string, string[]> };

beforeAll(async () => {
  ({ root, pkg } = await copyPackage('ow-bin-freshness-'));
  const built = await buildPackage(pkg);
  expect(built.exitCode, built.stderr).toBe(0);
  build = JSON.parse(await readFile(join(pkg, 'dist', 'build.json'), 'utf8')) as typeof build;
  config = join(root, 'one-works.yaml');
  await writeFile(config, `state: { directory: ${join(root, 'state')} }\n`);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function oneWorks(args: string[]) {
  return execa(process.execPath, [join(pkg, 'cli', 'bin.cjs'), '--config', config, ...args], {
    cwd: root,
    reject: false,
    stdin: 'ignore',
    env: { NODE_OPTIONS: '' },
  });
}

// Only a run of the build writes a code cache: none left means that run took the sources.
async function ranTheBuild(args: string[]): Promise<{ stdout: string; built: boolean }> {
  const caches = join(pkg, 'dist', 'cli', 'code-cache');
  await rm(caches, { recursive: true, force: true });
  const result = await oneWorks(args);
  expect(result.exitCode, result.stderr).toBe(0);
  return { stdout: result.stdout, built: existsSync(caches) };
}

// Rewrites a source with one string replaced (its mtime becomes now, after the build).
async function edit(file: string, from: string, to: string): Promise<void> {
  const path = join(pkg, file);
  const text = await readFile(path, 'utf8');
  expect(text).toContain(from);
  await writeFile(path, text.replace(from, to));
}

describe('cli/bin.cjs and an edited checkout', () => {
  it(
    'runs the sources for a command whose bundle holds an edited source, and the build for one whose bundle does not',
    async () => {
      const sessionsBundle = build.lean.sessions!.bundle;
      expect(build.sources[sessionsBundle]).toContain('cli/commands/sessions.ts');
      expect(build.sources[sessionsBundle]).not.toContain('cli/commands/config.ts');
      expect(build.sources[build.bundle]).toEqual(expect.arrayContaining(['cli/commands/sessions.ts', 'cli/commands/config.ts']));

      expect(await ranTheBuild(['sessions'])).toEqual({ stdout: 'no sessions yet', built: true });
      expect(await ranTheBuild(['config', 'check'])).toMatchObject({ built: true });

      // An edit outside the sessions bundle: `sessions` keeps its build, `config` (main bundle) takes the edit.
      await edit('cli/commands/config.ts', "'validate and inspect one-works.yaml'", "'validate and inspect one-works.yaml (edited)'");
      expect(await ranTheBuild(['sessions'])).toEqual({ stdout: 'no sessions yet', built: true });
      const help = await oneWorks(['config', '--help']);
      expect(help.stdout).toContain('validate and inspect one-works.yaml (edited)');
      expect(await ranTheBuild(['config', 'check'])).toMatchObject({ built: false });

      // An edit inside it: `sessions` prints what the edited source says.
      await edit('cli/commands/sessions.ts', "ctx.out.line('no sessions yet')", "ctx.out.line('no sessions yet (edited)')");
      expect(await ranTheBuild(['sessions'])).toEqual({ stdout: 'no sessions yet (edited)', built: false });
    },
    BUILD_TIMEOUT_MS,
  );
});
