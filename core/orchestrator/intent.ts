import type { PresentationEnv } from '../process/index.js';
import type { Autonomy } from '../adapter.js';

/**
 * What a new `run` is about to create, told to the orchestrator before its createSession (as
 * soon as the client reached it, or with the spawn of a server it starts), so that the agent
 * starts while the client still loads its config and makes its checks. No prompt: a session is
 * only created by its createSession.
 */
export interface SessionIntent {
  /** The adapter (absent: the host's `defaults.adapter`). */
  adapter?: string | undefined;
  /** The workspace directory as the client names it (absolute); approved under the orchestrator's config. */
  workspace: string;
  model?: string | undefined;
  effort?: string | undefined;
  autonomy?: Autonomy | undefined;
  title?: string | undefined;
  labels?: string[] | undefined;
  /** The client's presentation variables (TERM, COLORTERM, NO_COLOR). */
  presentation?: PresentationEnv | undefined;
}

/**
 * How long an agent started for an intent waits for its createSession, in ms: then it is
 * discarded (stopped, its session directory removed). A client's checks take well under a second
 * on an idle machine, but seconds on a loaded one; a client that goes away discards its intent at
 * once anyway, so this bounds only a connected client that never sends its createSession.
 */
export const INTENT_WINDOW_MS = 30_000;

/**
 * What the orchestrator resolved of an intent, or of a createSession, that decides which agent
 * may serve it: an agent started for one serves only a request whose facts are the same.
 */
export interface IntentFacts {
  adapter: string;
  /** The canonical, approved workspace. */
  workspace: string;
  model?: string | undefined;
  effort?: string | undefined;
  autonomy?: string | undefined;
  title?: string | undefined;
  labels?: readonly string[] | undefined;
  presentation?: PresentationEnv | undefined;
}

/**
 * True when an agent started for `intent` may serve a createSession with `request`'s facts:
 * same adapter, workspace, model, effort, autonomy, title, labels (in order, deduplicated as the record
 * keeps them) and presentation variables. An empty title or label list is the same as none.
 */
export function matchesIntent(intent: IntentFacts, request: IntentFacts): boolean {
  return intentKey(intent) === intentKey(request);
}

function intentKey(facts: IntentFacts): string {
  const labels = [...new Set(facts.labels ?? [])];
  const p = facts.presentation ?? {};
  return JSON.stringify([
    facts.adapter,
    facts.workspace,
    facts.model ?? null,
    facts.effort ?? null,
    facts.autonomy ?? null,
    facts.title || null,
    labels,
    p.TERM ?? null,
    p.COLORTERM ?? null,
    p.NO_COLOR ?? null,
  ]);
}
