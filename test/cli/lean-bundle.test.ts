import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { createFileStore } from '../../core/store/index.js';
import { BUILD_TIMEOUT_MS, buildPackage, copyPackage } from '../support/package-copy.js';

// scripts/build.js gives the `sessions` commands (sessions, events, asks, answer) a bundle of their
// own, without the adapters and the installer (LEAN_BUNDLES). Built here into a copy of the package
// (the checkout's own dist/ may be stale or in use), then run as the installed command runs it:
// cli/bin.cjs picks that bundle, and every command of the group works from it.

let root: string;
let pkg: string;
let work: string;
let config: string;
let stateDir: string;
let build: { bundleHash: string; lean: Record<string, { bundle: string; bundleHash: string }> };

beforeAll(async () => {
  ({ root, pkg } = await copyPackage('ow-lean-bundle-'));
  const built = await buildPackage(pkg);
  expect(built.exitCode, built.stderr).toBe(0);
  build = JSON.parse(await readFile(join(pkg, 'dist', 'build.json'), 'utf8')) as typeof build;
  work = join(root, 'work');
  stateDir = join(work, 'state');
  await mkdir(work);
  config = join(work, 'one-works.yaml');
  await writeFile(config, `state: { directory: ${stateDir} }\nworkspaces: { approved: [${work}] }\n`);
  // One recorded session with a finished run and an event.
  const store = await createFileStore(stateDir);
  const at = '2026-12-01T10:00:00.000Z';
  await store.writeSession({
    id: 's-lean-1',
    adapter: 'droid',
    workspace: work,
    createdAt: at,
    updatedAt: at,
    status: 'idle',
    title: 'lean title',
    runs: [
      { id: 'r1', prompt: 'say hi', status: 'completed', reason: 'completed', autonomy: 'low', startedAt: at, endedAt: at, text: 'hi' },
    ],
  } as Parameters<typeof store.writeSession>[0]);
  await store.appendEvents('s-lean-1', [
    { sessionId: 's-lean-1', seq: 1, at, key: 'log:1', type: 'log', level: 'info', message: 'seeded' },
  ]);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function oneWorks(args: string[], configFile = config) {
  const result = await execa(process.execPath, [join(pkg, 'cli', 'bin.cjs'), '--config', configFile, ...args], {
    cwd: work,
    reject: false,
    stdin: 'ignore',
    env: { NODE_OPTIONS: '' },
  });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
}

// An idle session `id` with no runs and one `log` event (seq 1) holding `message`, recorded at `at`.
async function seedIdleSession(id: string, at: string, message: string): Promise<void> {
  const store = await createFileStore(stateDir);
  await store.writeSession({
    id,
    adapter: 'droid',
    workspace: work,
    createdAt: at,
    updatedAt: at,
    status: 'idle',
    runs: [],
  } as Parameters<typeof store.writeSession>[0]);
  await store.appendEvents(id, [{ sessionId: id, seq: 1, at, key: 'log:1', type: 'log', level: 'info', message }]);
}

describe('the sessions commands’ own bundle', () => {
  it('is what build.json names for sessions, events, asks and answer, and not for other commands', () => {
    for (const name of ['sessions', 'events', 'asks', 'answer']) {
      expect(build.lean[name]).toEqual({ bundle: 'dist/cli/sessions.cjs', bundleHash: expect.stringMatching(/^[0-9a-f]{16}$/) });
    }
    expect(build.lean.sessions?.bundleHash).not.toBe(build.bundleHash);
    expect(Object.keys(build.lean).sort()).toEqual(['answer', 'asks', 'events', 'sessions']);
  });

  it('runs every command of the group: list, --json, show, events, asks, answer, archive, rm', { timeout: 120_000 }, async () => {
    const list = await oneWorks(['sessions']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^s-lean-1 {2}droid .* idle .* r1 completed .*"lean title"$/);
    const json = await oneWorks(['--json', 'sessions']);
    expect(JSON.parse(json.stdout)).toMatchObject({ sessionId: 's-lean-1', status: 'idle', runs: 1, title: 'lean title' });
    const show = await oneWorks(['sessions', 'show', 's-lean-1']);
    expect(show.stdout).toContain('session s-lean-1 (droid)');
    expect(show.stdout).toContain('      < hi');
    const events = await oneWorks(['--json', 'events', 's-lean-1']);
    expect(JSON.parse(events.stdout)).toMatchObject({ type: 'log', message: 'seeded' });
    const asks = await oneWorks(['asks']);
    expect([asks.exitCode, asks.stdout]).toEqual([0, 'no open asks (no orchestrator is running)']);
    const answer = await oneWorks(['answer', 'a-1', 'allow']);
    expect(answer.stderr).toContain('no open ask a-1: no orchestrator is running');
    const missing = await oneWorks(['sessions', 'show', 'nope']);
    expect([missing.exitCode === EXIT.ok, missing.stderr]).toEqual([false, `one-works: no session nope in ${stateDir}`]);
    const archived = await oneWorks(['sessions', 'archive', 's-lean-1']);
    expect(archived.exitCode, archived.stderr).toBe(0);
    expect((await oneWorks(['sessions'])).stdout).toBe('no sessions yet');
    expect((await oneWorks(['sessions', '--all'])).stdout).toContain('(archived)');
    const removed = await oneWorks(['sessions', 'rm', 's-lean-1']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect((await oneWorks(['sessions', '--all'])).stdout).toBe('no sessions yet');
    // They ran the lean bundle: its code caches are the only ones, named after its hash, beside that
    // of yaml's chunk (scripts/build.js CHUNKED_PACKAGES), loaded once to parse the config's text.
    const files = await readdir(join(pkg, 'dist', 'cli', 'code-cache'));
    const caches = files.filter((name) => name.endsWith('.bin'));
    expect(caches.filter((name) => name.includes(`-${build.lean.sessions?.bundleHash}-`)).length).toBeGreaterThan(0);
    expect(caches.filter((name) => !name.includes(`-${build.lean.sessions?.bundleHash}-`))).toEqual([
      expect.stringMatching(/^chunk-yaml-[0-9a-f]{16}-/),
    ]);
    // Beside them, the config's parsed value they kept (core/config/value-cache.ts), and nothing else.
    expect(files.filter((name) => !name.endsWith('.bin'))).toEqual([expect.stringMatching(/^config-value-[0-9a-z]+\.json$/)]);
  });

  it('loads none of node:module, node:timers/promises, node:fs/promises and node:net to list sessions into a pipe (each is required on first use)', async () => {
    // The module list of the process, written as it exits by a preloaded script.
    const preload = join(root, 'module-list.cjs');
    const list = join(root, 'modules.txt');
    await writeFile(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`,
    );
    const result = await execa(process.execPath, ['--require', preload, join(pkg, 'cli', 'bin.cjs'), '--config', config, 'sessions'], {
      cwd: work,
      reject: false,
      stdin: 'ignore',
      env: { NODE_OPTIONS: '' },
    });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const loaded = (await readFile(list, 'utf8')).split('\n');
    // The list holds what the command loaded: node:vm, which runs the bundle, is there.
    expect(loaded).toContain('NativeModule vm');
    expect(
      loaded.filter((name) =>
        ['NativeModule module', 'NativeModule timers/promises', 'NativeModule fs/promises', 'NativeModule net'].includes(name),
      ),
    ).toEqual([]);
    // Its stdout was a pipe (execa's), written straight: Node's stream for it, node:net, was never made (cli/stdio.ts).
    expect(String(result.stdout)).toBe('no sessions yet');
  });

  // libuv starts its thread pool (four threads) on a process's first asynchronous file-system call;
  // a command that reads the state and exits makes none (FileStoreOptions.syncReads). Counted in
  // /proc as the process exits, against `node -e 0` with the same preload (Node's own threads).
  // Linux only, as One Works' sandbox is: elsewhere the count fails, it is not skipped.
  it('lists, shows and prints events without starting the thread pool (as many threads as `node -e 0`)', async () => {
    const preload = join(root, 'thread-count.cjs');
    await writeFile(
      preload,
      `process.on('exit', () => require('node:fs').writeSync(2, 'threads ' + require('node:fs').readdirSync('/proc/self/task').length + '\\n'));\n`,
    );
    const threads = async (args: string[]): Promise<string> => {
      const result = await execa(process.execPath, ['--require', preload, ...args], {
        cwd: work,
        reject: false,
        stdin: 'ignore',
        env: { NODE_OPTIONS: '' },
      });
      expect(result.exitCode, String(result.stderr)).toBe(0);
      return String(result.stderr).split('\n').at(-1) ?? '';
    };
    await seedIdleSession('s-lean-pool', '2026-12-01T12:00:00.000Z', 'pooled');
    const bin = join(pkg, 'cli', 'bin.cjs');
    const node = await threads(['-e', '0']);
    expect(node).toMatch(/^threads \d+$/);
    for (const args of [['sessions'], ['--json', 'sessions', '--all'], ['sessions', 'show', 's-lean-pool'], ['events', 's-lean-pool']]) {
      expect([args.join(' '), await threads([bin, '--config', config, ...args])]).toEqual([args.join(' '), node]);
    }
  });

  it('follows a log with `events --follow` (node:timers/promises required by the bundle when it first waits)', {
    timeout: 60_000,
  }, async () => {
    const at = '2026-12-01T11:00:00.000Z';
    await seedIdleSession('s-lean-follow', at, 'first line');
    const store = await createFileStore(stateDir);
    const follower = execa(
      process.execPath,
      [join(pkg, 'cli', 'bin.cjs'), '--config', config, '--json', 'events', 's-lean-follow', '--follow'],
      {
        cwd: work,
        reject: false,
        stdin: 'ignore',
        env: { NODE_OPTIONS: '' },
      },
    );
    let out = '';
    const waiters: Array<() => void> = [];
    follower.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      for (const wake of waiters.splice(0)) wake();
    });
    // Resolves once stdout holds `text`; rejects if the follower exits first.
    const printed = (text: string) =>
      Promise.race([
        new Promise<void>((resolve) => {
          const check = (): void => {
            if (out.includes(text)) resolve();
            else waiters.push(check);
          };
          check();
        }),
        follower.then((result) => {
          throw new Error(`events --follow exited ${result.exitCode} before printing ${text}: ${String(result.stderr)}`);
        }),
      ]);
    try {
      await printed('first line');
      // The log read to its end, the follower waits for new lines (pollMs 100) before this one comes.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await store.appendEvents('s-lean-follow', [
        { sessionId: 's-lean-follow', seq: 2, at, key: 'log:2', type: 'log', level: 'info', message: 'second line' },
      ]);
      await printed('second line');
    } finally {
      follower.kill('SIGINT');
    }
    // Interrupted while following: the interrupt's exit code, no error.
    const result = await follower;
    expect([result.exitCode, String(result.stderr)]).toEqual([EXIT.interrupted, '']);
    const records = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; message?: string });
    expect(records.map((record) => record.message)).toEqual(['first line', 'second line']);
  });

  it('fails loudly, naming the module, when a command outside it is run from it', async () => {
    const driver = join(root, 'driver.cjs');
    await writeFile(
      driver,
      `const { loadBundle } = require(${JSON.stringify(join(pkg, 'cli', 'run-build.cjs'))});\n` +
        `loadBundle(${JSON.stringify(join(pkg, 'dist', 'cli', 'sessions.cjs'))}, undefined).main(process.argv.slice(2)).then((code) => { process.exitCode = code; });\n`,
    );
    const result = await execa(process.execPath, [driver, '--config', config, 'doctor'], { cwd: work, reject: false, stdin: 'ignore' });
    // The command's module fails to load (before main's own error handling): exit 1, the error on stderr.
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("cli/commands/doctor.ts is not in the sessions commands' bundle");
  });
});

describe("the bundles with semver's patterns written out", () => {
  // `sessions` parses no adapter block (it reads none: core/config/load.ts deferredBlocks), so the
  // pinned versions are checked through `config check`, which parses them all.
  it('validates pinned CLI versions and ranges as semver does (the build writes the patterns of semver out)', async () => {
    const withCli = async (cli: string) => {
      const file = join(work, 'pinned.yaml');
      await writeFile(file, `state: { directory: ${stateDir} }\nadapters:\n  droid:\n    cli: ${cli}\n`);
      return oneWorks(['config', 'check'], file);
    };
    const pinned = await withCli('{ source: managed, version: 0.225.2, range: ">=0.225.0 <0.226.0" }');
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    const notExact = await withCli('{ version: "0.225" }');
    expect(notExact.exitCode).toBe(EXIT.usage);
    expect(notExact.stderr).toContain('adapters.droid.cli.version: expected an exact semver version such as');
    expect(notExact.stderr).toContain('got "0.225" (a range belongs in cli.range)');
    const outside = await withCli('{ version: 0.225.2, range: "^1.2.0" }');
    expect(outside.stderr).toContain('expected a range that includes the pinned version 0.225.2, got "^1.2.0"');
    const noRange = await withCli('{ version: 0.225.2, range: "one or two" }');
    expect(noRange.stderr).toContain('expected a valid semver range such as ">=');
  });
});

describe('packages in bundles of their own (CHUNKED_PACKAGES in scripts/build.js)', () => {
  // A line of each package's code, to find it in a bundle. The installer's packages are used through
  // their chunks by test/cli/adapters-install.test.ts and test/conformance/cli-upgrade.test.ts.
  const CODE = {
    yaml: 'in block collection must be sufficiently indented',
    pg: 'SASL: SCRAM-SERVER-FIRST-MESSAGE',
    'npm-registry-fetch': 'npm-notice',
    tar: 'TAR_ENTRY_INVALID',
    ssri: 'EINTEGRITY',
  };

  it('are in their chunks and in no command bundle', async () => {
    const text = (name: string) => readFile(join(pkg, 'dist', 'cli', name), 'latin1');
    for (const [name, code] of Object.entries(CODE)) expect(await text(`chunk-${name}.cjs`)).toContain(code);
    // iconv-lite's encoding tables (0.5 MB) came with npm-registry-fetch: now in that chunk only.
    const ICONV_CODE = 'Encoding not recognized';
    expect(await text('chunk-npm-registry-fetch.cjs')).toContain(ICONV_CODE);
    for (const bundle of ['main.cjs', 'sessions.cjs', 'early-intent.cjs']) {
      const source = await text(bundle);
      for (const [name, code] of Object.entries({ ...CODE, 'iconv-lite': ICONV_CODE })) {
        expect(source, `${name} in ${bundle}`).not.toContain(code);
      }
    }
  });

  it('loads yaml only for a config text it has not parsed, and says so when its chunk is missing', { timeout: 120_000 }, async () => {
    const file = join(work, 'chunked.yaml');
    const chunk = join(pkg, 'dist', 'cli', 'chunk-yaml.cjs');
    await writeFile(file, `state: { directory: ${stateDir} }\n# first text\n`);
    // A text never parsed: YAML is parsed (the chunk loads), and the value kept.
    const first = await oneWorks(['sessions'], file);
    expect(first.exitCode, first.stderr).toBe(0);
    // A syntax error is found by yaml, with its line and column.
    await writeFile(join(work, 'broken.yaml'), 'state: [\n');
    const broken = await oneWorks(['sessions'], join(work, 'broken.yaml'));
    expect(broken.exitCode).toBe(EXIT.usage);
    expect(broken.stderr).toMatch(/broken\.yaml:2:1: YAML syntax error/);
    await rename(chunk, `${chunk}.away`);
    try {
      // The same text again: its kept value is used, and yaml is never loaded.
      const kept = await oneWorks(['sessions'], file);
      expect(kept.exitCode, kept.stderr).toBe(0);
      expect(kept.stdout).toBe((await oneWorks(['sessions'])).stdout);
      // A new text needs yaml: without its chunk, the error names it and the way out.
      await writeFile(file, `state: { directory: ${stateDir} }\n# second text\n`);
      const edited = await oneWorks(['sessions'], file);
      expect(edited.exitCode).not.toBe(0);
      expect(edited.stderr).toContain('dist/cli/chunk-yaml.cjs is missing: run npm run build again');
    } finally {
      await rename(`${chunk}.away`, chunk);
    }
    const again = await oneWorks(['sessions'], file);
    expect(again.exitCode, again.stderr).toBe(0);
  });
});
