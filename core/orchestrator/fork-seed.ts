import type { RuntimeEvent } from '../events/index.js';

/**
 * The seed a fork's first turn carries: a compact transcript of the source session up to a run
 * (user prompts, assistant text, tool outcomes), bounded in size. No native fork is claimed:
 * the new session starts a new native conversation that reads this transcript. The log it is
 * built from is already redacted; the caller redacts the result once more.
 */

/** Largest transcript a fork carries, in characters; older entries are dropped first. */
export const MAX_FORK_SEED_CHARS = 32_000;
/** Longest single entry (a prompt, a reply, a tool outcome) in the transcript, in characters. */
const MAX_ENTRY_CHARS = 2_000;

export interface ForkSeed {
  text: string;
  /** Runs whose history the seed carries, oldest first. */
  runs: string[];
  /** Entries dropped to stay within the bound. */
  omitted: number;
}

/**
 * The transcript of `events` up to and including run `upTo` (every run when undefined).
 * `recordedRuns` are the runs of the source's record (its own turns, as opposed to imported history).
 */
export function buildForkSeed(
  sourceId: string,
  events: readonly RuntimeEvent[],
  recordedRuns: ReadonlySet<string>,
  upTo: string | undefined,
  prompt: string,
): ForkSeed {
  // A run begins at its turn.started (a queued turn's turn.queued can precede the end of the
  // run before it); history imported from an agent CLI has no turn.started, only turn.queued.
  const prompts = new Map<string, string>();
  const started = new Set<string>();
  for (const event of events) {
    if (event.type === 'turn.queued') prompts.set(event.runId, event.prompt);
    if (event.type === 'turn.started') started.add(event.runId);
  }
  const begins = (event: RuntimeEvent): string | undefined => {
    if (event.type === 'turn.started') return event.runId;
    if (event.type === 'turn.queued' && !started.has(event.runId) && !recordedRuns.has(event.runId)) return event.runId;
    return undefined;
  };
  const entries: string[] = [];
  const runs: string[] = [];
  const calls = new Map<string, string>();
  let current: string | undefined;
  for (const event of events) {
    const begun = begins(event);
    if (begun !== undefined) {
      if (upTo !== undefined && current === upTo) break;
      current = begun;
      runs.push(begun);
      entries.push(`User: ${clip(prompts.get(begun) ?? '')}`);
    } else if (current === undefined) {
      // Before the first run began: nothing of a run to carry.
    } else if (event.type === 'assistant.message' && event.text !== '') {
      entries.push(`Assistant: ${clip(event.text)}`);
    } else if (event.type === 'tool.call') {
      calls.set(event.toolUseId, event.label);
    } else if (event.type === 'tool.result') {
      const label = calls.get(event.toolUseId) ?? event.toolUseId;
      entries.push(`Tool ${label} → ${event.isError ? 'error' : 'ok'}: ${clip(event.output)}`);
    }
  }
  let omitted = 0;
  const head = `[Forked from One Works session ${sourceId}${upTo ? ` up to run ${upTo}` : ''}. The conversation so far, for context:]`;
  const tail = '[End of the earlier conversation.]';
  const size = (): number => head.length + tail.length + entries.reduce((n, e) => n + e.length + 1, 0);
  while (entries.length > 0 && size() > MAX_FORK_SEED_CHARS) {
    entries.shift();
    omitted += 1;
  }
  const body = [head, ...(omitted > 0 ? [`[… ${omitted} earlier entries omitted]`] : []), ...entries, tail].join('\n');
  return { text: prompt.trim() === '' ? `${body}\n\nContinue from here.` : `${body}\n\n${prompt}`, runs, omitted };
}

function clip(text: string): string {
  const flat = text.trim();
  return flat.length > MAX_ENTRY_CHARS ? `${flat.slice(0, MAX_ENTRY_CHARS)} … [${flat.length - MAX_ENTRY_CHARS} chars cut]` : flat;
}
