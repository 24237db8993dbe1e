import type { SessionSummary, TurnHandle } from '../../core/orchestrator/index.js';

// The short text content that accompanies each structured result (for clients that show text only).

export function handleText(handle: TurnHandle): string {
  const s = handle.settings;
  return `session ${handle.sessionId}: run ${handle.runId} ${handle.state} (model ${s.model ?? 'default'}, effort ${s.effort ?? 'default'}, autonomy ${s.autonomy})`;
}

export function summaryText(summary: SessionSummary): string {
  const run = summary.latestRun ? `, run ${summary.latestRun.runId} ${summary.latestRun.status}${summary.latestRun.reason ? ` (${summary.latestRun.reason})` : ''}` : '';
  const queued = summary.queueDepth > 0 ? `, ${summary.queueDepth} queued` : '';
  const title = summary.title ? ` "${summary.title}"` : '';
  const attention = summary.attention?.length ? ` — ${summary.attention.join('; ')}` : '';
  return `session ${summary.sessionId}${title}: ${summary.state}${run}${queued}${attention}`;
}
