import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProgressReport } from '../../../core/adapter.js';
import { formatProgress, PROGRESS_INTERVAL_MS } from '../../../core/install/index.js';
import { ProgressThrottle } from '../../../core/install/progress.js';

describe('formatProgress', () => {
  it('shows bytes, percentage and rate for a download', () => {
    const report: ProgressReport = {
      phase: 'download',
      message: 'downloading @factory/cli-linux-x64@0.225.2',
      receivedBytes: 45_100_000,
      totalBytes: 114_800_000,
    };
    expect(formatProgress(report, 3_667)).toBe('downloading @factory/cli-linux-x64@0.225.2  45.1 MB / 114.8 MB  39%  12.3 MB/s');
  });

  it('leaves out the total and percentage when the size is unknown, and the rate before any time passed', () => {
    const report: ProgressReport = { phase: 'download', message: 'downloading x@1.0.0', receivedBytes: 2_000_000, totalBytes: undefined };
    expect(formatProgress(report, 0)).toBe('downloading x@1.0.0  2.0 MB');
  });

  it('is just the message for other phases', () => {
    expect(formatProgress({ phase: 'verify', message: 'verified x@1.0.0' }, 1_000)).toBe('verified x@1.0.0');
  });
});

describe('ProgressThrottle', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const bytes = (receivedBytes: number): ProgressReport => ({ phase: 'download', message: 'd', receivedBytes, totalBytes: 100 });

  it('sends at most one byte report per interval and delivers the latest held one afterwards', () => {
    const seen: ProgressReport[] = [];
    const throttle = new ProgressThrottle((report) => seen.push(report));
    throttle.phase(bytes(0));
    throttle.bytes(bytes(10));
    throttle.bytes(bytes(20));
    expect(seen.map((r) => r.receivedBytes)).toEqual([0]);
    vi.advanceTimersByTime(PROGRESS_INTERVAL_MS);
    expect(seen.map((r) => r.receivedBytes)).toEqual([0, 20]);
    vi.advanceTimersByTime(PROGRESS_INTERVAL_MS);
    throttle.bytes(bytes(30));
    expect(seen.map((r) => r.receivedBytes)).toEqual([0, 20, 30]);
  });

  it('lets phase changes through at once, dropping a held byte report', () => {
    const seen: ProgressReport[] = [];
    const throttle = new ProgressThrottle((report) => seen.push(report));
    throttle.phase(bytes(0));
    throttle.bytes(bytes(50));
    throttle.phase({ phase: 'verify', message: 'v' });
    vi.advanceTimersByTime(PROGRESS_INTERVAL_MS * 2);
    expect(seen.map((r) => r.phase)).toEqual(['download', 'verify']);
  });

  it('sends nothing after close', () => {
    const seen: ProgressReport[] = [];
    const throttle = new ProgressThrottle((report) => seen.push(report));
    throttle.phase(bytes(0));
    throttle.bytes(bytes(50));
    throttle.close();
    throttle.phase({ phase: 'done', message: 'x' });
    vi.advanceTimersByTime(PROGRESS_INTERVAL_MS * 2);
    expect(seen).toHaveLength(1);
  });
});
