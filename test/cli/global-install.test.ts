import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// npm install fetches the runtime dependencies from the registry (or npm's own cache).
const INSTALL_TIMEOUT_MS = 240_000;
// npm pack builds dist/ with tsc first (about a minute on a loaded 2-core machine).
const PACK_TIMEOUT_MS = 300_000;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ow-global-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('global install', () => {
  it(
    'installs the packed package with npm install -g and runs one-works from its bin',
    async () => {
      const npmEnv = { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
      // npm pack runs the prepare script first: the esbuild bundle into dist/, which the tarball carries.
      const pack = await execa('npm', ['pack', '--json', '--pack-destination', root], { cwd: REPO, env: npmEnv, timeout: PACK_TIMEOUT_MS });
      const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
      const files = packed?.files.map((f) => f.path) ?? [];
      expect(files).toContain('cli/bin.cjs');
      expect(files).toContain('cli/bin.js');
      expect(files).toContain('dist/cli/main.cjs');
      expect(files).toContain('cli/run-build.cjs');
      // The code caches are made by the installed command's own runs, never packed.
      expect(files.filter((f) => f.includes('code-cache'))).toEqual([]);
      expect(files).toContain('dist/build.json');

      const prefix = join(root, 'prefix');
      await execa('npm', ['install', '--global', '--prefix', prefix, join(root, packed!.filename)], {
        cwd: root,
        env: npmEnv,
        timeout: INSTALL_TIMEOUT_MS,
      });

      const bin = join(prefix, 'bin', 'one-works');
      const work = join(root, 'work');
      await mkdir(work);
      // A user's shell: the installed bin on its own, run from an unrelated directory.
      const env = { PATH: process.env.PATH ?? '', HOME: work, XDG_CONFIG_HOME: join(work, '.config') };
      const help = await execa(bin, ['--help'], { cwd: work, env, extendEnv: false, reject: false, timeout: 60_000 });
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toMatch(/^Usage: one-works \[options\] \[command\]/);

      const check = await execa(bin, ['--json', 'config', 'check'], { cwd: work, env, extendEnv: false, reject: false, timeout: 60_000 });
      expect(check.exitCode).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ path: null, config: { adapters: { droid: { cli: { version: '0.225.2' } } } } });
      // The first run (of the build, not the sources) left V8's code cache of `config` next to the
      // bundle; the next run takes it (V8 refusing it would have it written again).
      const installed = join(prefix, 'lib', 'node_modules', 'one-works');
      const { bundleHash } = JSON.parse(await readFile(join(installed, 'dist', 'build.json'), 'utf8')) as { bundleHash: string };
      const cacheFile = join(installed, 'dist', 'cli', 'code-cache', `config-${bundleHash}-${process.version}-${process.arch}.bin`);
      expect(await readdir(dirname(cacheFile))).toEqual([basename(cacheFile)]);
      const written = await stat(cacheFile);
      const again = await execa(bin, ['--json', 'config', 'check'], { cwd: work, env, extendEnv: false, reject: false, timeout: 60_000 });
      expect([again.exitCode, again.stdout, again.stderr]).toEqual([0, check.stdout, check.stderr]);
      expect((await stat(cacheFile)).mtimeMs).toBe(written.mtimeMs);

      // The build loads node:child_process only to spawn (commander's executable subcommands,
      // agents, the orchestrator), and node:crypto only for random names and hashes (the code
      // cache's check is zlib's CRC-32): listing sessions loads neither. Node's own list of the
      // built-in modules it loaded, written at exit by a preloaded script.
      const hook = join(root, 'builtins-at-exit.cjs');
      await writeFile(
        hook,
        "process.on('exit', () => require('node:fs').writeFileSync(process.env.BUILTINS_FILE, process.moduleLoadList.join('\\n')));\n",
      );
      const builtinsFile = join(root, 'builtins.txt');
      const config = join(work, 'one-works.yaml');
      await writeFile(config, `state: { directory: ${join(work, 'state')} }\n`);
      const sessions = await execa(
        process.execPath,
        ['--require', hook, join(installed, 'cli', 'bin.cjs'), '--config', config, 'sessions'],
        {
          cwd: work,
          env: { ...env, BUILTINS_FILE: builtinsFile },
          extendEnv: false,
          reject: false,
          timeout: 60_000,
        },
      );
      expect([sessions.exitCode, sessions.stdout]).toEqual([0, 'no sessions yet']);
      const builtins = (await readFile(builtinsFile, 'utf8')).split('\n');
      expect(builtins).toContain('NativeModule vm');
      expect(builtins.filter((line) => /^NativeModule (child_process|internal\/child_process)$/.test(line))).toEqual([]);
      expect(builtins.filter((line) => /^NativeModule (crypto|internal\/crypto\/.*)$/.test(line))).toEqual([]);
    },
    PACK_TIMEOUT_MS + INSTALL_TIMEOUT_MS + 120_000,
  );
});
