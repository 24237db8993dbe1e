import type { ProgressReport } from '../adapter.js';

/** Minimum spacing of byte-count reports (about ten a second). Phase changes are never held back. */
export const PROGRESS_INTERVAL_MS = 100;

/**
 * Throttles download reports to one per {@link PROGRESS_INTERVAL_MS}; the latest held-back
 * report is delivered by a trailing timer, so a stalled download still shows its last count.
 * `phase` reports pass straight through. `close()` cancels the timer; nothing is sent after it.
 */
export class ProgressThrottle {
  readonly #sink: ((report: ProgressReport) => void) | undefined;
  #lastAt = 0;
  #held: ProgressReport | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(sink: ((report: ProgressReport) => void) | undefined) {
    this.#sink = sink;
  }

  /** Sends a phase change (or any report that must not be dropped) now. */
  phase(report: ProgressReport): void {
    this.#clearHeld();
    this.#send(report);
  }

  /** Sends a byte-count report now, or holds it until the interval allows. */
  bytes(report: ProgressReport): void {
    if (!this.#sink || this.#closed) return;
    const wait = this.#lastAt + PROGRESS_INTERVAL_MS - Date.now();
    if (wait <= 0) {
      this.#clearHeld();
      this.#send(report);
      return;
    }
    this.#held = report;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const held = this.#held;
      this.#held = undefined;
      if (held) this.#send(held);
    }, wait).unref();
  }

  /** Drops any held report and stops the timer. */
  close(): void {
    this.#clearHeld();
    this.#closed = true;
  }

  #clearHeld(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held = undefined;
  }

  #send(report: ProgressReport): void {
    if (!this.#sink || this.#closed) return;
    this.#lastAt = Date.now();
    this.#sink(report);
  }
}

/**
 * One line for a person: the report's message, then for downloads the byte counts, percentage
 * and rate, e.g. `downloading @factory/cli-linux-x64@0.225.2  45.1 MB / 114.8 MB  39%  12.3 MB/s`.
 * `elapsedMs` is the time since the download started; sizes are decimal megabytes. Pure.
 */
export function formatProgress(report: ProgressReport, elapsedMs: number): string {
  const received = report.receivedBytes;
  if (report.phase !== 'download' || received === undefined) return report.message;
  const parts = [report.message];
  const total = report.totalBytes;
  if (total !== undefined && total > 0) {
    parts.push(`${megabytes(received)} / ${megabytes(total)}`, `${Math.min(100, Math.floor((received / total) * 100))}%`);
  } else {
    parts.push(megabytes(received));
  }
  if (elapsedMs > 0) parts.push(`${megabytes((received / elapsedMs) * 1000)}/s`);
  return parts.join('  ');
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
