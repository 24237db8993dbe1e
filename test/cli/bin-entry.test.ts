import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.js';
import { createFileStore } from '../../core/store/index.js';
import { sessionRecord } from '../core/store/store-helpers.js';

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

  // `sessions` and the other commands of the lean bundle exit as soon as their work is done
  // (cli/bin.cjs, exitsOnReturn): nothing they print may be lost, even when the reader is slow.
  it('a listing larger than a pipe holds reaches a reader that starts late, whole', async () => {
    const stateDir = join(dir, 'state');
    const store = await createFileStore(stateDir);
    const count = 400;
    const title = 'a long title '.repeat(80);
    for (let i = 0; i < count; i++) await store.writeSession(sessionRecord(`s-${String(i).padStart(4, '0')}`, { title }));
    const config = join(dir, 'one-works.yaml');
    await writeFile(config, `state: { directory: ${stateDir} }\n`);
    const child = spawn(process.execPath, [join(ROOT, 'cli/bin.cjs'), '--config', config, 'sessions', '--json'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // Nothing is read for a while: the command fills the pipe and what its stream holds.
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.stdout.resume();
    const code = await closed;
    expect(code).toBe(0);
    const output = Buffer.concat(chunks).toString('utf8');
    expect(output.length).toBeGreaterThan(256 * 1024);
    const lines = output.trimEnd().split('\n');
    expect(lines).toHaveLength(count);
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(
      Array.from({ length: count }, (_, i) => `s-${String(i).padStart(4, '0')}`),
    );
  });
});
