import type { ProgressReport } from '../core/adapter.js';
import { formatProgress } from '../core/install/index.js';
import type { Output } from './output.js';
import { terminalSafe } from './terminal-text.js';

/**
 * Renders install progress on stderr: a single rewritten line (bytes, percent, speed) on a TTY,
 * a line per phase without one, nothing in --json mode.
 */
export function createProgressRenderer(out: Output, stderr: NodeJS.WriteStream = process.stderr): (report: ProgressReport) => void {
  const started = Date.now();
  let lastPhase: string | undefined;
  let drewLine = false;
  return (report) => {
    if (out.json) return;
    if (stderr.isTTY) {
      const line = formatProgress(report, Date.now() - started);
      stderr.write(`\r\x1b[2K${terminalSafe(line)}`);
      drewLine = true;
      if (report.phase === 'done') {
        stderr.write('\n');
        drewLine = false;
      }
      return;
    }
    if (report.phase !== lastPhase) {
      if (drewLine) stderr.write('\n');
      lastPhase = report.phase;
      stderr.write(`${terminalSafe(report.message)}\n`);
    }
  };
}
