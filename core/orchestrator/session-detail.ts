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
export function readBounds(request: { maxEvents?: number | undefined; maxBytes?: number | undefined }): {
  maxEvents: number;
  maxBytes: number;
} {
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

/** Longest string field (at any depth) of an event a read returns; a longer one is cut, with a marker. */
export const MAX_EVENT_STRING_CHARS = 8 * 1024;
/** Longest latestRun prompt or text a read returns; a longer one is cut, with a marker, and the view says `truncated`. */
export const MAX_RUN_TEXT_CHARS = 32 * 1024;

// Caps tried in turn on an event's strings until it fits the bytes left: 8 KiB first, then smaller.
const STRING_CAPS = [MAX_EVENT_STRING_CHARS, 2048, 512, 128];

/** A copy of a JSON-like value with `map` applied to every string in it, at any depth (object keys untouched). */
export function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapStrings(item, map)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, mapStrings(item, map)])) as T;
}

/** `text` cut to its first `max` characters followed by `… [N chars cut]`; unchanged when not longer. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}… [${text.length - end} chars cut]`;
}

/**
 * The newest persisted events, oldest first, without deltas: at most `maxEvents`, and at most
 * `maxBytes` of their JSON. Every string in an event longer than {@link MAX_EVENT_STRING_CHARS}
 * is cut (marker `… [N chars cut]`), and cut shorter (down to 128 characters) when the event
 * still does not fit the bytes left, so one huge event (a tool result) never hides the events
 * around it. Stops at the first event (going back in time) that fits in no form, so the result
 * is always a contiguous tail; `truncated` when older events were left out. `prepare` (e.g.
 * masking) is applied to each event looked at before it is measured and cut.
 */
export function recentEvents(
  log: readonly RuntimeEvent[],
  bounds: { maxEvents: number; maxBytes: number },
  prepare: (event: RuntimeEvent) => RuntimeEvent = (event) => event,
): { events: RuntimeEvent[]; truncated: boolean } {
  const kept: RuntimeEvent[] = [];
  let bytes = 0;
  let index = log.length - 1;
  for (; index >= 0 && kept.length < bounds.maxEvents; index--) {
    const event = log[index]!;
    if (event.type.endsWith('.delta')) continue;
    const fitted = fitEvent(prepare(event), bounds.maxBytes - bytes);
    if (!fitted) break;
    bytes += fitted.size;
    kept.push(fitted.event);
  }
  const truncated = log.slice(0, index + 1).some((event) => !event.type.endsWith('.delta'));
  return { events: kept.reverse(), truncated };
}

// The event with its strings cut to the largest cap that makes it fit `room` bytes of JSON.
function fitEvent(event: RuntimeEvent, room: number): { event: RuntimeEvent; size: number } | undefined {
  for (const cap of STRING_CAPS) {
    const capped = mapStrings(event, (text) => cutText(text, cap));
    const size = Buffer.byteLength(JSON.stringify(capped), 'utf8');
    if (size <= room) return { event: capped, size };
  }
  return undefined;
}

/** A run view whose prompt and text may have been cut for a read; `truncated` when either was. */
export type BoundedRunView = RunView & { truncated?: true };

/** {@link runView} with its prompt and text cut to `maxChars` (marker `… [N chars cut]`). */
export function boundedRunView(run: RunRecord, maxChars: number = MAX_RUN_TEXT_CHARS): BoundedRunView {
  const view = runView(run);
  const prompt = cutText(view.prompt, maxChars);
  const text = view.text === undefined ? undefined : cutText(view.text, maxChars);
  const cut = prompt !== view.prompt || text !== view.text;
  return { ...view, prompt, ...(text === undefined ? {} : { text }), ...(cut ? { truncated: true } : {}) };
}

/** A run as readSession shows it. */
export function runView(run: RunRecord): RunView {
  return {
    runId: run.id,
    status: run.status,
    ...(run.reason === undefined ? {} : { reason: run.reason }),
    prompt: run.prompt,
    settings: {
      ...(run.model === undefined ? {} : { model: run.model }),
      ...(run.effort === undefined ? {} : { effort: run.effort }),
      autonomy: run.autonomy,
    },
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
    ...(run.text === undefined ? {} : { text: run.text }),
    ...(run.usage === undefined ? {} : { usage: run.usage }),
    ...(run.mode === undefined ? {} : { mode: run.mode }),
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
