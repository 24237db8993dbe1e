import type { SessionDetail, SessionSummary, TurnHandle } from '../../core/orchestrator/index.js';
import { cutText } from '../../core/orchestrator/session-detail.js';

// The short text content that accompanies each structured result (for clients that show text only).

export function handleText(handle: TurnHandle): string {
  const s = handle.settings;
  return `session ${handle.sessionId}: run ${handle.runId} ${handle.state} (model ${s.model ?? 'default'}, effort ${s.effort ?? 'default'}, autonomy ${s.autonomy})`;
}

export function summaryText(summary: SessionSummary): string {
  const run = summary.latestRun
    ? `, run ${summary.latestRun.runId} ${summary.latestRun.status}${summary.latestRun.reason ? ` (${summary.latestRun.reason})` : ''}${summary.latestRun.mode === 'oneshot' ? ' in one-shot mode' : ''}`
    : '';
  const queued = summary.queueDepth > 0 ? `, ${summary.queueDepth} queued` : '';
  const title = summary.title ? ` "${summary.title}"` : '';
  const attention = summary.attention?.length ? ` — ${summary.attention.join('; ')}` : '';
  const worktree = summary.worktree ? `; worktree ${summary.worktree.path} on ${summary.worktree.branch} (${summary.worktree.state})` : '';
  return `session ${summary.sessionId}${title}: ${summary.state}${run}${queued}${attention}${worktree}`;
}

/** Characters of the latest run's text (and of each question) a read's text content previews. */
const PREVIEW_CHARS = 300;

/**
 * The text content of read_session: a short summary (the session, the latest run with a preview
 * of its text, how many events came back, unanswered questions), never the whole run text again;
 * structuredContent has the rest.
 */
export function detailText(detail: Omit<SessionDetail, 'events'> & { events: readonly unknown[] }): string {
  const lines = [summaryText(detail.summary)];
  const run = detail.latestRun;
  if (run) lines.push(`latest run ${run.runId} ${run.status}${run.text ? `: ${cutText(run.text, PREVIEW_CHARS)}` : ''}`);
  lines.push(`${detail.events.length} recent event(s)${detail.eventsTruncated ? ', older ones left out' : ''}`);
  if (detail.pendingQuestions.length > 0)
    lines.push(`unanswered: ${detail.pendingQuestions.map((q) => cutText(q, PREVIEW_CHARS)).join(' | ')}`);
  return lines.join('\n');
}
