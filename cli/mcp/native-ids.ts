/**
 * Native agent session ids (droid's conversation UUIDs, its child-session ids) never leave the
 * MCP server: handles are One Works ids. The orchestrator's summaries and handles carry none,
 * and the tools' output schemas strip every undocumented field; what remains are recorded
 * events, whose payloads come from the agent. This module removes native-id fields from them,
 * then replaces every value it removed wherever else it appears in the same result, and masks
 * UUID-shaped strings in the places where native ids are known to show up (native payloads,
 * settings snapshots, log and error messages).
 */

import { mapStrings } from '../../core/orchestrator/session-detail.js';
import { NATIVE_ID_MASK } from '../../core/orchestrator/session-queries.js';

export { NATIVE_ID_MASK };

const NATIVE_KEY = /^(native_?session_?id|child_?session_?id|session_?id)$/i;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** `text` with UUID-shaped substrings (the form of droid's session ids) masked. */
export function maskUuids(text: string): string {
  return text.replace(UUID, NATIVE_ID_MASK);
}

/**
 * A copy of recorded events fit for an MCP client: the native-derived `key` dropped,
 * `child_session.childSessionId` dropped, session-id fields removed from `native` payloads and
 * `settings.changed` snapshots (at any depth), UUIDs masked there and in `log`/`error`
 * messages. Returns the removed id values too, for {@link maskValues}.
 */
export function scrubEvents(events: readonly Record<string, unknown>[]): { events: Record<string, unknown>[]; removed: Set<string> } {
  const removed = new Set<string>();
  const scrubbed = events.map((event) => {
    const { key: _key, ...rest } = event;
    if (rest.type === 'child_session') {
      if (typeof rest.childSessionId === 'string') removed.add(rest.childSessionId);
      delete rest.childSessionId;
    }
    if (rest.type === 'native' && 'payload' in rest) rest.payload = scrubDeep(rest.payload, removed);
    if (rest.type === 'settings.changed' && 'settings' in rest) rest.settings = scrubDeep(rest.settings, removed);
    if ((rest.type === 'log' || rest.type === 'error') && typeof rest.message === 'string') rest.message = maskUuids(rest.message);
    return rest;
  });
  return { events: scrubbed, removed };
}

/** A copy of `value` with every occurrence of the given strings inside its strings replaced by the mask. */
export function maskValues<T>(value: T, needles: ReadonlySet<string>): T {
  const list = [...needles].filter((n) => n.length >= 8).sort((a, b) => b.length - a.length);
  if (list.length === 0) return value;
  return mapStrings(value, (s) => list.reduce((text, needle) => text.split(needle).join(NATIVE_ID_MASK), s));
}

// Agent-supplied JSON: drop session-id keys (remembering their values) and mask UUIDs in strings.
function scrubDeep(value: unknown, removed: Set<string>): unknown {
  if (typeof value === 'string') return maskUuids(value);
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, removed));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    if (NATIVE_KEY.test(name)) {
      if (typeof item === 'string') removed.add(item);
      continue;
    }
    out[name] = scrubDeep(item, removed);
  }
  return out;
}
