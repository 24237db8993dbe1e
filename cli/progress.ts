import type { ProgressReport } from '../core/adapter.js';
import { formatProgress } from '../core/install/progress.js';
import type { Output } from './output.js';
import { PROCESS_STDERR, type TextSink } from './stdio.js';
import { terminalSafe } from './terminal-text.js';

/** Phases that mean bytes are being fetched or written: an install really happens. */
const INSTALL_PHASES = new Set<ProgressReport['phase']>(['resolve', 'download', 'verify', 'extract']);

/**
 * Renders install progress on stderr, and only when something is installed: a single rewritten
 * line (bytes, percent, speed) on a TTY, ended when the install is done; a line per phase
 * without a TTY; nothing in --json mode. A CLI that is already installed, and the `--version`
 * check of the binary, print nothing unless `verbose` (then one full line each).
 */
export function createProgressRenderer(
  out: Output,
  options: { verbose?: boolean } = {},
  stderr: TextSink = PROCESS_STDERR,
): (report: ProgressReport) => void {
  const started = Date.now();
  let installing = false;
  let lastPhase: string | undefined;
  let drewLine = false;
  const endLine = (): void => {
    if (drewLine) stderr.write('\n');
    drewLine = false;
  };
  return (report) => {
    if (out.json) return;
    if (INSTALL_PHASES.has(report.phase)) installing = true;
    if (!installing || report.phase === 'check') {
      // Nothing is being installed: a cache hit's "already installed" and the version check.
      if (options.verbose) {
        endLine();
        stderr.write(`${terminalSafe(out.redact(report.message))}\n`);
      }
      return;
    }
    if (stderr.isTTY) {
      const line = out.redact(formatProgress(report, Date.now() - started));
      stderr.write(`\r\x1b[2K${terminalSafe(line)}`);
      drewLine = true;
      if (report.phase === 'done') {
        endLine();
        installing = false;
      }
      return;
    }
    if (report.phase !== lastPhase) {
      lastPhase = report.phase;
      stderr.write(`${terminalSafe(out.redact(report.message))}\n`);
    }
    if (report.phase === 'done') installing = false;
  };
}
