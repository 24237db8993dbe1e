import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

// cli/stdio.ts: the CLI's stdout and stderr write straight to a pipe or a file, and through Node's
// stream otherwise or once the descriptor refuses. Whichever way, a reader gets every line, in
// order, even when it starts reading late and the process exits as soon as its output is written.
const WRITER = fileURLToPath(new URL('../fixtures/processes/stdio-writes.ts', import.meta.url));
const LINES = 2000; // some 2 MB: far more than a pipe holds

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Runs the writer on pipes and reads nothing for `lateMs`, so the pipe fills.
async function runLate(mode: 'direct' | 'nonblocking', lateMs: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, String(LINES), mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdout.pause();
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await new Promise((resolve) => setTimeout(resolve, lateMs));
  child.stdout.resume();
  const code = await closed;
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

function expectWhole(run: Run): { isTTY: Record<string, boolean>; streamMade: Record<string, boolean> } {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(LINES);
  expect(lines.map((line) => Number(line.split(' ')[0]))).toEqual(Array.from({ length: LINES }, (_, i) => i));
  const errLines = run.stderr.trimEnd().split('\n');
  expect(errLines.slice(0, -1)).toEqual(Array.from({ length: LINES / 10 }, (_, i) => String(i * 10)));
  return JSON.parse(errLines.at(-1)!) as { isTTY: Record<string, boolean>; streamMade: Record<string, boolean> };
}

describe("the CLI's stdout and stderr (cli/stdio.ts)", () => {
  it('reach a pipe read late whole and in order', async () => {
    expectWhole(await runLate('direct', 500));
  });

  it('hand the rest to the stream when a non-blocking pipe is full: nothing lost or reordered', async () => {
    const report = expectWhole(await runLate('nonblocking', 500));
    // The pipe refused a write (EAGAIN): stdout's sink went on through the stream.
    expect(report.streamMade.stdout).toBe(true);
  });

  it('write what a pipe takes at once without making a Node stream', async () => {
    const run = await execa(process.execPath, ['--import', 'tsx', WRITER, '20', 'direct'], { stdin: 'ignore', reject: false });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.split('\n').map((line) => Number(line.split(' ')[0]))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const report = JSON.parse(run.stderr.trimEnd().split('\n').at(-1)!) as {
      isTTY: Record<string, boolean>;
      streamMade: Record<string, boolean>;
    };
    expect(report).toEqual({ isTTY: { stdout: false, stderr: false }, streamMade: { stdout: false, stderr: false } });
  });

  it('write to a file straight, and to /dev/null through the stream', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-stdio-'));
    try {
      const file = join(dir, 'out.txt');
      // The descriptor of the file itself (execa's `{ file }` would pipe to it through the parent).
      const fd = openSync(file, 'w');
      const child = spawn(process.execPath, ['--import', 'tsx', WRITER, String(LINES), 'direct'], { stdio: ['ignore', fd, 'pipe'] });
      closeSync(fd);
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      const report = expectWhole({ code, stdout: await readFile(file, 'utf8'), stderr });
      expect(report.streamMade).toEqual({ stdout: false, stderr: false });

      const toNull = await execa(process.execPath, ['--import', 'tsx', WRITER, '20', 'direct'], {
        stdin: 'ignore',
        stdout: 'ignore',
        reject: false,
      });
      expect(toNull.exitCode, toNull.stderr).toBe(0);
      const last = JSON.parse(toNull.stderr.trimEnd().split('\n').at(-1)!) as { streamMade: Record<string, boolean> };
      // /dev/null is a character device, as a terminal is: its isTTY is asked of Node's stream.
      expect(last.streamMade).toEqual({ stdout: true, stderr: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('go through the stream on a terminal, which is told a TTY', async () => {
    const driver = fileURLToPath(new URL('../support/pty-run.py', import.meta.url));
    const run = await execa(
      'python3',
      [driver, '--timeout', '30', '--dialog', '[]', '--', process.execPath, '--import', 'tsx', WRITER, '30', 'direct'],
      { reject: false, timeout: 60_000, stdin: 'ignore' },
    );
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    const screen = run.stdout.replaceAll('\r', '');
    expect(screen).toContain(`29 ${'x'.repeat(1000)}`);
    expect(screen).toContain('{"isTTY":{"stdout":true,"stderr":true},"streamMade":{"stdout":true,"stderr":true}}');
  });
});
