import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AskChoice, OpenAsk } from '../../core/permissions/index.js';
import type { OrchestratorAccess } from './mcp-server.js';

/** How often the sessions of this MCP client are checked for new asks, in ms. */
export const ELICITATION_POLL_MS = 500;

/** A running watcher: `track` adds a session, `close` stops polling and withdraws open elicitations. */
export interface ElicitationWatcher {
  track(sessionId: string): void;
  close(): void;
}

/**
 * Sends an MCP elicitation (`elicitation/create`, form mode) to this server's client for every
 * ask opened on a session the client created or named in a tool call (create_session,
 * send_message, wait_for_sessions, …), when the client declared the `elicitation` capability.
 * Accept answers with the chosen decision (questions: the typed texts), decline denies, cancel
 * leaves the ask to the other channels and the timeout. An elicitation whose ask was settled
 * elsewhere is withdrawn (its request aborted). Never throws; failures go to `log`.
 */
export function watchAsksForElicitation(server: Server, orchestrator: OrchestratorAccess, log: (line: string) => void): ElicitationWatcher {
  const tracked = new Set<string>();
  const pending = new Map<string, AbortController>();
  let polling = false;
  const timer = setInterval(() => {
    if (polling || tracked.size === 0 || server.getClientCapabilities()?.elicitation === undefined) return;
    polling = true;
    poll()
      .catch((error: unknown) => log(`elicitation: listing asks failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        polling = false;
      });
  }, ELICITATION_POLL_MS);
  timer.unref();

  async function poll(): Promise<void> {
    const open = (await Promise.all([...tracked].map((id) => orchestrator.use((o) => o.listAsks(id)).catch(() => [])))).flat();
    const ids = new Set(open.map((ask) => ask.askId));
    for (const [askId, controller] of pending) {
      if (ids.has(askId)) continue;
      controller.abort('answered elsewhere');
      pending.delete(askId);
    }
    for (const ask of open) if (!pending.has(ask.askId)) void elicit(ask);
  }

  async function elicit(ask: OpenAsk): Promise<void> {
    const controller = new AbortController();
    pending.set(ask.askId, controller);
    try {
      const result = await server.request(
        { method: 'elicitation/create', params: { message: messageOf(ask), requestedSchema: schemaOf(ask) } },
        ElicitResultSchema,
        // A person may take as long as the ask stays open; the withdrawal above ends it otherwise.
        { signal: controller.signal, timeout: 2 ** 31 - 1 },
      );
      if (result.action === 'cancel') return;
      const content = (result.content ?? {}) as Record<string, unknown>;
      const choice: AskChoice = result.action === 'decline' ? 'deny' : choiceOf(ask, content);
      const text = ask.kind === 'question' ? (ask.questions ?? []).map((_, i) => String(content[`answer${i + 1}`] ?? '')) : [];
      await orchestrator.use((o) =>
        o.answerAsk({ askId: ask.askId, choice, channel: 'elicitation', ...(choice !== 'deny' && text.length > 0 ? { text } : {}) }),
      );
    } catch (error) {
      if (!controller.signal.aborted) log(`elicitation for ${ask.askId}: ${error instanceof Error ? error.message : String(error)}`);
    }
    // The entry stays until the ask leaves the list, so that a cancelled elicitation is not sent again.
  }

  return {
    track: (sessionId) => tracked.add(sessionId),
    close: () => {
      clearInterval(timer);
      for (const controller of pending.values()) controller.abort('closing');
    },
  };
}

function choiceOf(ask: OpenAsk, content: Record<string, unknown>): AskChoice {
  if (ask.kind === 'question') return 'allow';
  const decision = content.decision;
  return decision === 'allow' || decision === 'allow-session' ? decision : 'deny';
}

function messageOf(ask: OpenAsk): string {
  if (ask.kind === 'question')
    return `The agent in session ${ask.sessionId} asks: ${(ask.questions ?? []).map((q) => q.question).join(' / ')}`;
  const tools = ask.tools.map((t) => t.label).join(', ');
  return `Session ${ask.sessionId} wants to run ${tools}. Asked because ${ask.reason}.`;
}

// The form: a decision for a permission ask; one text per question (its options listed).
function schemaOf(ask: OpenAsk): { type: 'object'; properties: Record<string, object>; required: string[] } {
  if (ask.kind === 'question') {
    const questions = ask.questions ?? [];
    const properties: Record<string, object> = {};
    questions.forEach((q, i) => {
      const options = q.options.length > 0 ? ` Options: ${q.options.map((o, n) => `${n + 1}) ${o}`).join(', ')} (a number picks one).` : '';
      properties[`answer${i + 1}`] = { type: 'string', title: q.topic ?? `Question ${i + 1}`, description: `${q.question}${options}` };
    });
    return { type: 'object', properties, required: Object.keys(properties) };
  }
  return {
    type: 'object',
    properties: {
      decision: {
        type: 'string',
        title: 'Decision',
        enum: ['allow', 'allow-session', 'deny'],
        enumNames: ['Allow once', 'Allow for this session', 'Deny'],
      },
    },
    required: ['decision'],
  };
}
