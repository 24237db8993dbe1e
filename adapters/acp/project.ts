import type { EventDraft, Usage } from '../../core/events/index.js';
import { type AcpToolFacts, acpToolKind, acpToolLabel, type CommandSource, mergeToolFacts } from './tools.js';

/**
 * ACP `session/update` notifications → One Works events. Message and thought chunks stream as
 * deltas and are committed as one `assistant.message` per turn; tool calls are spans keyed by
 * their tool call id, opened by whichever sighting comes first (`tool_call`, a
 * `tool_call_update`, or a permission request) and closed by a `completed` / `failed` update;
 * terminal content (sent by droid although One Works declares no terminal) is tolerated and not
 * read. Plans, available commands and every update kind without a mapping are kept as `native`
 * events; mode and config option changes as `settings.changed`.
 */
export class AcpProjector {
  readonly #workspace: string;
  readonly #epoch: string;
  readonly #commandSource: CommandSource;
  readonly #tools = new Map<string, AcpToolFacts>();
  readonly #open = new Set<string>();
  readonly #phase = new Map<string, string>();
  #runId = 'none';
  #deltas = 0;
  #natives = 0;
  #text: string[] = [];
  #thinking: string[] = [];

  /** `epoch`: unique per agent process, so that facts without a native id never collide across processes. */
  constructor(workspace: string, epoch: string, commandSource: CommandSource = 'rawInput') {
    this.#workspace = workspace;
    this.#epoch = epoch;
    this.#commandSource = commandSource;
  }

  beginTurn(runId: string): void {
    this.#runId = runId;
    this.#deltas = 0;
    this.#text = [];
    this.#thinking = [];
  }

  /** The assistant text of the current turn. */
  turnText(): string {
    return this.#text.join('');
  }

  /** The committed message of the turn (none when the agent said nothing). */
  commitTurn(): EventDraft[] {
    const text = this.turnText();
    const thinking = this.#thinking.join('');
    if (text === '' && thinking === '') return [];
    return [
      {
        type: 'assistant.message',
        key: `message:${this.#runId}`,
        messageId: this.#runId,
        text,
        ...(thinking !== '' ? { thinking } : {}),
      },
    ];
  }

  /** The facts known about a tool call (for a permission request), merged with what the request says. */
  sight(update: Record<string, unknown>): { facts: AcpToolFacts; drafts: EventDraft[] } {
    const id = String(update.toolCallId);
    const facts = mergeToolFacts(this.#tools.get(id), update);
    this.#tools.set(id, facts);
    return { facts, drafts: this.#span(facts, 'input') };
  }

  project(update: Record<string, unknown>): EventDraft[] {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
        return this.#chunk(update);
      case 'user_message_chunk':
        return [];
      case 'tool_call':
      case 'tool_call_update':
        return this.#tool(update);
      case 'current_mode_update':
        return [this.#settings({ mode: update.currentModeId })];
      case 'config_option_update':
        return [this.#settings(currentValues(update.configOptions))];
      case 'usage_update':
        return [];
      default:
        this.#natives += 1;
        return [
          {
            type: 'native',
            key: `native:${this.#epoch}:${this.#natives}`,
            nativeType: typeof update.sessionUpdate === 'string' ? update.sessionUpdate : 'unknown',
            payload: update,
          },
        ];
    }
  }

  /** Closes the spans still open (the agent went away, or the turn was cancelled mid-tool). */
  closeOpenSpans(why: string): EventDraft[] {
    const drafts: EventDraft[] = [...this.#open].map((toolUseId) => ({
      type: 'tool.result' as const,
      key: `tool.result:${toolUseId}`,
      toolUseId,
      isError: true,
      output: why,
      closedBy: 'runtime' as const,
    }));
    this.#open.clear();
    return drafts;
  }

  #chunk(update: Record<string, unknown>): EventDraft[] {
    const content = update.content as { type?: unknown; text?: unknown } | undefined;
    if (content?.type !== 'text' || typeof content.text !== 'string' || content.text === '') return [];
    const thinking = update.sessionUpdate === 'agent_thought_chunk';
    (thinking ? this.#thinking : this.#text).push(content.text);
    this.#deltas += 1;
    return [
      {
        type: 'assistant.delta',
        key: `delta:${this.#runId}:${this.#deltas}`,
        messageId: this.#runId,
        text: content.text,
        ...(thinking ? { thinking: true } : {}),
      },
    ];
  }

  #tool(update: Record<string, unknown>): EventDraft[] {
    const { facts, drafts } = this.sight(update);
    if (facts.status === 'in_progress') drafts.push(...this.#span(facts, 'running'));
    if (facts.status === 'completed' || facts.status === 'failed') {
      if (!this.#open.has(facts.toolCallId)) return drafts;
      this.#open.delete(facts.toolCallId);
      drafts.push({
        type: 'tool.result',
        key: `tool.result:${facts.toolCallId}`,
        toolUseId: facts.toolCallId,
        isError: facts.status === 'failed',
        output: toolOutput(update),
        closedBy: 'agent',
      });
    }
    return drafts;
  }

  // One `tool.call` per phase and span; a span already closed is not reopened.
  #span(facts: AcpToolFacts, phase: 'input' | 'running'): EventDraft[] {
    const id = facts.toolCallId;
    if (this.#phase.get(id) === phase || (this.#phase.has(id) && !this.#open.has(id))) return [];
    if (phase === 'input' && this.#phase.get(id) === 'running') return [];
    this.#phase.set(id, phase);
    this.#open.add(id);
    return [
      {
        type: 'tool.call',
        key: `tool.call:${id}:${phase}`,
        toolUseId: id,
        name: facts.kind ?? 'other',
        kind: acpToolKind(facts.kind),
        label: acpToolLabel(facts, this.#workspace, this.#commandSource),
        phase,
        ...(facts.rawInput !== undefined ? { input: facts.rawInput } : {}),
      },
    ];
  }

  #settings(settings: Record<string, unknown>): EventDraft {
    this.#natives += 1;
    return { type: 'settings.changed', key: `settings:${this.#epoch}:${this.#natives}`, settings };
  }
}

// `configOptions` of a config_option_update → `{ <option id>: <current value> }`.
function currentValues(options: unknown): Record<string, unknown> {
  if (!Array.isArray(options)) return {};
  const out: Record<string, unknown> = {};
  for (const option of options as Array<{ id?: unknown; currentValue?: unknown }>) {
    if (typeof option?.id === 'string') out[option.id] = option.currentValue;
  }
  return out;
}

/** The text of a tool call's content (`content` blocks of text) or its `rawOutput`; terminal content is skipped. */
function toolOutput(update: Record<string, unknown>): string {
  const parts: string[] = [];
  if (Array.isArray(update.content)) {
    for (const item of update.content as Array<{ type?: unknown; content?: { type?: unknown; text?: unknown } }>) {
      if (item?.type === 'content' && item.content?.type === 'text' && typeof item.content.text === 'string') parts.push(item.content.text);
    }
  }
  if (parts.length > 0) return parts.join('\n');
  const raw = update.rawOutput;
  if (typeof raw === 'string') return raw;
  if (raw && typeof raw === 'object') {
    const output = (raw as { output?: unknown }).output;
    return typeof output === 'string' ? output : JSON.stringify(raw);
  }
  return '';
}

/**
 * Usage a prompt result reports: ACP's `usage` (unstable in v1); with `metaQuota`, Gemini CLI's
 * `_meta.quota.token_count` (`input_tokens`, `output_tokens`: the sums over the turn's model
 * requests) when there is no `usage`. Unreported otherwise, never zeros made up.
 */
export function promptUsage(result: { usage?: unknown; _meta?: unknown }, options: { metaQuota?: boolean } = {}): Usage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const reported = (fields: Record<string, number | undefined>): Usage => ({
    reported: true,
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
  });
  const u = result.usage as
    | {
        inputTokens?: number;
        outputTokens?: number;
        thoughtTokens?: number | null;
        cachedReadTokens?: number | null;
        cachedWriteTokens?: number | null;
      }
    | null
    | undefined;
  if (u && typeof u === 'object') {
    return reported({
      inputTokens: n(u.inputTokens),
      outputTokens: n(u.outputTokens),
      thinkingTokens: n(u.thoughtTokens),
      cacheReadTokens: n(u.cachedReadTokens),
      cacheCreationTokens: n(u.cachedWriteTokens),
    });
  }
  if (options.metaQuota) {
    const count = (result._meta as { quota?: { token_count?: { input_tokens?: unknown; output_tokens?: unknown } } } | null | undefined)
      ?.quota?.token_count;
    const input = n(count?.input_tokens);
    const output = n(count?.output_tokens);
    if (input !== undefined || output !== undefined) return reported({ inputTokens: input, outputTokens: output });
  }
  return { reported: false };
}
