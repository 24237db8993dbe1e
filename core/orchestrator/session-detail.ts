import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RuntimeEvent, Usage } from '../events/index.js';
import type { RunRecord, SessionRecord } from '../store/index.js';
import type { RunView, UsageReport } from './types.js';

/** Events a read returns when it names no count. */
export const DEFAULT_READ_EVENTS = 50;
/** Most events one read returns. */
export const MAX_READ_EVENTS = 200;
/** Largest serialized size of a read's events (also the default): 256 KiB. */
export const MAX_READ_BYTES = 256 * 1024;

/** The read bounds with defaults applied; throws `usage` for bounds outside 1–200 events, 1–256 KiB. */
export function readBounds(request: { maxEvents?: number | undefined; maxBytes?: number | undefined }): { maxEvents: number; maxBytes: number } {
  const maxEvents = request.maxEvents ?? DEFAULT_READ_EVENTS;
  const maxBytes = request.maxBytes ?? MAX_READ_BYTES;
  if (!Number.isInteger(maxEvents) || maxEvents < 1 || maxEvents > MAX_READ_EVENTS) {
    throw new OneWorksError(ERROR_CODES.USAGE, `maxEvents must be an integer from 1 to ${MAX_READ_EVENTS} (got ${maxEvents})`);
  }
  if (!Number.isInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_READ_BYTES) {
    throw new OneWorksError(ERROR_CODES.USAGE, `maxBytes must be an integer from 1 to ${MAX_READ_BYTES} (got ${maxBytes})`);
  }
  return { maxEvents, maxBytes };
}

/**
 * The newest persisted events, oldest first, without deltas: at most `maxEvents`, and at most
 * `maxBytes` of their JSON. Stops at the first event (going back in time) that would not fit,
 * so the result is always a contiguous tail; `truncated` when older events were left out.
 */
export function recentEvents(log: readonly RuntimeEvent[], bounds: { maxEvents: number; maxBytes: number }): { events: RuntimeEvent[]; truncated: boolean } {
  const kept: RuntimeEvent[] = [];
  let bytes = 0;
  let index = log.length - 1;
  for (; index >= 0 && kept.length < bounds.maxEvents; index--) {
    const event = log[index]!;
    if (event.type.endsWith('.delta')) continue;
    const size = Buffer.byteLength(JSON.stringify(event), 'utf8');
    if (bytes + size > bounds.maxBytes) break;
    bytes += size;
    kept.push(event);
  }
  const truncated = log.slice(0, index + 1).some((event) => !event.type.endsWith('.delta'));
  return { events: kept.reverse(), truncated };
}

/** A run as readSession shows it. */
export function runView(run: RunRecord): RunView {
  return {
    runId: run.id,
    status: run.status,
    ...(run.reason === undefined ? {} : { reason: run.reason }),
    prompt: run.prompt,
    settings: { ...(run.model === undefined ? {} : { model: run.model }), ...(run.effort === undefined ? {} : { effort: run.effort }), autonomy: run.autonomy },
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
    ...(run.text === undefined ? {} : { text: run.text }),
    ...(run.usage === undefined ? {} : { usage: run.usage }),
  };
}

const TOKEN_FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheCreationTokens', 'thinkingTokens'] as const;

/** Sums usages: `reported` when any was; each token field present when any usage had it. */
export function sumUsage(usages: readonly Usage[]): Usage {
  const total: Usage = { reported: usages.some((u) => u.reported) };
  for (const field of TOKEN_FIELDS) {
    const values = usages.map((u) => u[field]).filter((v): v is number => v !== undefined);
    if (values.length > 0) total[field] = values.reduce((a, b) => a + b, 0);
  }
  return total;
}

/** Per-session usage of the runs that reported it, and the total over all of them. */
export function usageReport(records: readonly SessionRecord[]): UsageReport {
  const sessions = records.map((record) => {
    const reported = record.runs.flatMap((run) => (run.usage?.reported ? [run.usage] : []));
    return { sessionId: record.id, runs: reported.length, usage: sumUsage(reported) };
  });
  return { total: sumUsage(sessions.map((s) => s.usage).filter((u) => u.reported)), sessions };
}
