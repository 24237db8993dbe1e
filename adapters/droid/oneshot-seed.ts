import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventDraft } from '../../core/events/index.js';
import { journalHomePath, parseDroidJournal } from './import/index.js';

/**
 * Continuity of one-shot mode without Factory's servers. `droid exec --session-id` fetches the
 * session from Factory's backend (offline it exits 1 with no output, droid 0.225.2 and 0.215.0),
 * so a one-shot turn that cannot continue its native session starts a new one whose prompt
 * carries the conversation so far as a bounded transcript, read from droid's own journal in the
 * session HOME (and extended by the one-shot turns themselves).
 */

/** Largest transcript carried, in characters; the oldest entries are dropped first. */
export const MAX_CARRIED_CHARS = 32_000;
/** Longest single entry (a prompt, a reply, a tool outcome), in characters. */
const MAX_ENTRY_CHARS = 2_000;

/** The conversation entries (`User: …`, `Assistant: …`, `Tool …`) of a native session's journal; [] when there is none or it cannot be read. */
export async function journalEntries(home: string, cwd: string, nativeSessionId: string): Promise<string[]> {
  let content: string;
  try {
    content = await readFile(join(home, journalHomePath(cwd, nativeSessionId)), 'utf8');
  } catch {
    return [];
  }
  try {
    return transcriptEntries(parseDroidJournal(content, nativeSessionId).events);
  } catch {
    // A journal droid wrote that the importer refuses: nothing is carried rather than a guess.
    return [];
  }
}

/** The transcript entries of projected events: prompts, assistant text, tool outcomes. */
export function transcriptEntries(events: readonly EventDraft[]): string[] {
  const entries: string[] = [];
  const labels = new Map<string, string>();
  for (const event of events) {
    if (event.type === 'turn.queued') entries.push(`User: ${clip(event.prompt)}`);
    else if (event.type === 'assistant.message' && event.text !== '') entries.push(`Assistant: ${clip(event.text)}`);
    else if (event.type === 'tool.call') labels.set(event.toolUseId, event.label);
    else if (event.type === 'tool.result') {
      entries.push(`Tool ${labels.get(event.toolUseId) ?? event.toolUseId} → ${event.isError ? 'error' : 'ok'}: ${clip(event.output)}`);
    }
  }
  return entries;
}

/** One entry, clipped to its bound. */
export function transcriptEntry(role: 'User' | 'Assistant', text: string): string {
  return `${role}: ${clip(text)}`;
}

/** The prompt of a turn that carries `entries` before `prompt`, within MAX_CARRIED_CHARS. */
export function carriedPrompt(entries: readonly string[], prompt: string): string {
  const kept = [...entries];
  const head = '[One Works: droid could not continue its earlier session in one-shot mode. The conversation so far, for context:]';
  const tail = '[End of the earlier conversation.]';
  let omitted = 0;
  const size = (): number => head.length + tail.length + kept.reduce((n, e) => n + e.length + 1, 0);
  while (kept.length > 0 && size() > MAX_CARRIED_CHARS) {
    kept.shift();
    omitted += 1;
  }
  return [head, ...(omitted > 0 ? [`[… ${omitted} earlier entries omitted]`] : []), ...kept, tail, '', prompt].join('\n');
}

function clip(text: string): string {
  const flat = text.trim();
  return flat.length > MAX_ENTRY_CHARS ? `${flat.slice(0, MAX_ENTRY_CHARS)} … [${flat.length - MAX_ENTRY_CHARS} chars cut]` : flat;
}
