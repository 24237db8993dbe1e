import type { VersionFacts } from '../core/adapter.js';

/** Version facts for people: `apiVersion 1.0.0, protocolVersion 1.220.0`, keys sorted; `(none)` when empty. */
export function formatVersionFacts(facts: VersionFacts | undefined): string {
  const entries = Object.entries(facts ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '(none)' : entries.map(([key, value]) => `${key} ${value}`).join(', ');
}
