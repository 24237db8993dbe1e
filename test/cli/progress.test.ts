import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ProgressReport } from '../../core/adapter.js';
import { Output } from '../../cli/output.js';
import { createProgressRenderer } from '../../cli/progress.js';

// A stand-in stderr that records what was written, as a TTY or not.
function stderr(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream & PassThrough;
  stream.isTTY = isTTY;
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

const out = new Output({ json: false, stdout: new PassThrough(), stderr: new PassThrough() });
const cacheHit: ProgressReport[] = [
  { phase: 'done', message: '@factory/cli-linux-x64@0.225.2 is already installed in /cache/cli/droid/0.225.2' },
  { phase: 'check', message: 'checking /cache/cli/droid/0.225.2/bin/droid --version' },
];
const install: ProgressReport[] = [
  { phase: 'resolve', message: 'resolving @factory/cli-linux-x64@0.225.2 on registry.npmjs.org' },
  { phase: 'download', message: 'downloading', receivedBytes: 10, totalBytes: 100 },
  { phase: 'verify', message: 'verified against sha512 dist.integrity' },
  { phase: 'extract', message: 'installing into /cache/cli/droid/0.225.2' },
  { phase: 'done', message: 'installed @factory/cli-linux-x64@0.225.2' },
  { phase: 'check', message: 'checking /cache/cli/droid/0.225.2/bin/droid --version' },
];

describe('install progress on stderr', () => {
  for (const isTTY of [true, false]) {
    it(`prints nothing for a CLI that is already installed (${isTTY ? 'TTY' : 'no TTY'})`, () => {
      const err = stderr(isTTY);
      const render = createProgressRenderer(out, {}, err.stream);
      for (const report of cacheHit) render(report);
      expect(err.text()).toBe('');
    });

    it(`shows an install and ends its line, without the version check (${isTTY ? 'TTY' : 'no TTY'})`, () => {
      const err = stderr(isTTY);
      const render = createProgressRenderer(out, {}, err.stream);
      for (const report of install) render(report);
      expect(err.text()).toContain('installed @factory/cli-linux-x64@0.225.2');
      expect(err.text()).not.toContain('--version');
      // The next message starts on a line of its own.
      expect(err.text().endsWith('\n')).toBe(true);
    });
  }

  it('with --verbose, prints the cache hit and the version check as whole lines', () => {
    const err = stderr(true);
    const render = createProgressRenderer(out, { verbose: true }, err.stream);
    for (const report of cacheHit) render(report);
    expect(err.text()).toBe(`${cacheHit[0]!.message}\n${cacheHit[1]!.message}\n`);
  });
});
