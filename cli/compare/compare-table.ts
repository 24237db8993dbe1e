import type { CompareReport, CompareRow } from './run-compare.js';
import { label } from './run-compare.js';

/** The side-by-side table of a compare report, one row per contender, for people. */
export function compareTable(report: CompareReport): string {
  const header = ['contender', 'session', 'outcome', 'wall', 'tokens in/out', 'cost', 'files', 'lines', ...(report.check ? ['check'] : [])];
  const body = report.rows.map((row) => [
    label(row),
    row.sessionId ?? '—',
    outcomeText(row),
    row.wallMs === undefined ? '—' : `${(row.wallMs / 1000).toFixed(1)} s`,
    row.usage?.reported ? `${row.usage.inputTokens ?? '?'}/${row.usage.outputTokens ?? '?'}` : 'not reported',
    row.usage?.costUsd === undefined ? '—' : `$${row.usage.costUsd.toFixed(4)}`,
    row.filesChanged === undefined ? '—' : String(row.filesChanged),
    row.linesAdded === undefined ? '—' : `+${row.linesAdded} -${row.linesRemoved}`,
    ...(report.check ? [checkText(row)] : []),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  const lines = [line(header), ...body.map(line)];
  if (report.baseCommit) lines.push('', `base ${report.baseCommit}${report.check ? ` · check: ${report.check}` : ''}`);
  for (const row of report.rows) if (row.error) lines.push(`${label(row)}: ${row.error}`);
  const kept = report.rows.filter((row) => row.sessionId);
  if (kept.length > 0)
    lines.push('next: one-works diff SESSION · one-works send SESSION "…" · one-works merge SESSION · one-works discard SESSION');
  return lines.join('\n');
}

function outcomeText(row: CompareRow): string {
  const reason = row.reason && row.reason !== row.outcome ? ` (${row.reason})` : '';
  return `${row.outcome}${row.timedOut ? ' (timed out)' : reason}`;
}

function checkText(row: CompareRow): string {
  if (!row.check) return '—';
  if (row.check.timedOut) return 'timed out';
  return row.check.passed ? 'passed' : `failed (exit ${row.check.exitCode ?? '?'})`;
}
