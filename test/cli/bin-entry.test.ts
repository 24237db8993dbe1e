import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';

// The command's entry points: cli/bin.cjs (package.json `bin`, CommonJS) and cli/bin.js (the entry
// of earlier versions, which scripts may still start) behave the same: output, exit codes, errors.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = ['cli/bin.cjs', 'cli/bin.js'];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-bin-entry-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(entry: string, args: string[]) {
  return execa(process.execPath, [join(ROOT, entry), ...args], { cwd: dir, reject: false, stdin: 'ignore', env: { NODE_OPTIONS: '' } });
}

describe('the one-works entry points', () => {
  it('package.json names cli/bin.cjs as the command', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ 'one-works': 'cli/bin.cjs' });
  });

  for (const entry of ENTRIES) {
    it(`${entry}: prints the version, runs a command, and returns its exit code`, async () => {
      const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
      const version = await cli(entry, ['--version']);
      expect(version.exitCode).toBe(0);
      expect(version.stdout).toBe(pkg.version);

      const config = join(dir, 'one-works.yaml');
      await writeFile(config, `state: { directory: ${join(dir, 'state')} }\n`);
      const sessions = await cli(entry, ['--config', config, 'sessions']);
      expect(sessions.exitCode, sessions.stderr).toBe(0);
      expect(sessions.stdout).toBe('no sessions yet');

      const bad = await cli(entry, ['--config', join(dir, 'missing.yaml'), 'sessions']);
      expect(bad.exitCode).not.toBe(0);
      expect(bad.stderr).toMatch(/cannot read config file .*missing\.yaml/);

      const unknown = await cli(entry, ['--no-such-option']);
      expect(unknown.exitCode).toBe(EXIT.usage);
    });
  }
});
