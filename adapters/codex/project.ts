import type { EventDraft, TurnStatus, Usage } from '../../core/events/index.js';
import { codexToolKind, codexToolLabel, codexToolName, isToolItem } from './tools.js';
import type { ThreadItem, TokenBreakdown } from './wire.js';

/**
 * Codex app-server notifications → One Works events, keyed by native ids (item ids, turn ids)
 * so a re-sent fact is written once. Agent messages stream as deltas and commit on
 * `item/completed`; command executions, file changes, MCP and dynamic tool calls are tool spans
 * opened on `item/started` and closed on `item/completed`. A resumed thread's history arrives
 * only in the `thread/resume` result, which is not projected: nothing is re-emitted.
 */
export class CodexProjector {
  readonly #workspace: string;
  readonly #openTools = new Set<string>();
  readonly #items = new Map<string, ThreadItem>();
  readonly #deltas = new Map<string, number>();
  #turnMessages: string[] = [];
  #turnUsage: TokenBreakdown[] = [];

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  beginTurn(): void {
    this.#turnMessages = [];
    this.#turnUsage = [];
  }

  /** The turn's answer: its last committed agent message. */
  turnText(): string {
    return this.#turnMessages.at(-1) ?? '';
  }

  /** An item Codex announced (for approvals that name only its id). */
  item(itemId: string): ThreadItem | undefined {
    return this.#items.get(itemId);
  }

  itemStarted(item: ThreadItem): EventDraft[] {
    if (!item.id) return [];
    this.#items.set(item.id, item);
    if (!isToolItem(item.type)) return [];
    this.#openTools.add(item.id);
    return [
      {
        type: 'tool.call',
        key: `tool.call:${item.id}:running`,
        toolUseId: item.id,
        name: codexToolName(item),
        kind: codexToolKind(item.type),
        label: codexToolLabel(item, this.#workspace),
        phase: 'running',
        input: toolInput(item),
      },
    ];
  }

  itemCompleted(item: ThreadItem): EventDraft[] {
    if (!item.id) return [];
    this.#items.delete(item.id);
    if (item.type === 'agentMessage' && typeof item.text === 'string') {
      this.#turnMessages.push(item.text);
      return [{ type: 'assistant.message', key: `message:${item.id}`, messageId: item.id, text: item.text }];
    }
    if (!isToolItem(item.type)) return [];
    const drafts: EventDraft[] = [];
    // A span Codex never announced (an item completed straight away) still gets its call.
    if (!this.#openTools.has(item.id)) drafts.push(...this.itemStarted(item));
    this.#openTools.delete(item.id);
    const status = typeof item.status === 'string' ? item.status : 'completed';
    const failed = status !== 'completed' || (item.exitCode !== undefined && item.exitCode !== null && item.exitCode !== 0);
    drafts.push({
      type: 'tool.result',
      key: `tool.result:${item.id}`,
      toolUseId: item.id,
      isError: failed,
      output: toolOutput(item, status),
      closedBy: 'agent',
    });
    return drafts;
  }

  agentDelta(itemId: string, delta: string): EventDraft[] {
    const n = (this.#deltas.get(itemId) ?? 0) + 1;
    this.#deltas.set(itemId, n);
    return [{ type: 'assistant.delta', key: `delta:${itemId}:${n}`, messageId: itemId, text: delta }];
  }

  commandOutput(itemId: string, delta: string): EventDraft[] {
    const n = (this.#deltas.get(`out:${itemId}`) ?? 0) + 1;
    this.#deltas.set(`out:${itemId}`, n);
    return [{ type: 'tool.progress', key: `tool.progress:${itemId}:${n}`, toolUseId: itemId, text: delta }];
  }

  /** Records one model request's usage (`tokenUsage.last`) of the current turn. */
  usage(last: TokenBreakdown): void {
    this.#turnUsage.push(last);
  }

  /** The turn's usage: the sum over its model requests; unreported when Codex sent none. */
  turnUsage(): Usage {
    if (this.#turnUsage.length === 0) return { reported: false };
    const sum = (pick: (b: TokenBreakdown) => number): number => this.#turnUsage.reduce((total, b) => total + pick(b), 0);
    return {
      reported: true,
      inputTokens: sum((b) => b.inputTokens),
      outputTokens: sum((b) => b.outputTokens),
      cacheReadTokens: sum((b) => b.cachedInputTokens),
      thinkingTokens: sum((b) => b.reasoningOutputTokens),
    };
  }

  /** Closes tool spans still open (the child died, or the turn was interrupted mid-tool). */
  closeOpenSpans(why: string): EventDraft[] {
    const drafts: EventDraft[] = [...this.#openTools].map((toolUseId) => ({
      type: 'tool.result' as const,
      key: `tool.result:${toolUseId}`,
      toolUseId,
      isError: true,
      output: why,
      closedBy: 'runtime' as const,
    }));
    this.#openTools.clear();
    return drafts;
  }
}

/** How `turn/completed` ends a turn. */
export function codexTurnStatus(status: string, errorMessage: string | undefined): { status: TurnStatus; reason: string } {
  if (status === 'completed') return { status: 'completed', reason: 'completed' };
  if (status === 'interrupted') return { status: 'interrupted', reason: 'cancelled' };
  if (status === 'failed') return { status: 'failed', reason: errorMessage ? `failed: ${errorMessage}` : 'failed' };
  return { status: 'unknown', reason: status };
}

function toolInput(item: ThreadItem): unknown {
  switch (item.type) {
    case 'commandExecution':
      return { command: item.command, cwd: item.cwd };
    case 'fileChange':
      return { changes: item.changes };
    default:
      return item.arguments;
  }
}

function toolOutput(item: ThreadItem, status: string): string {
  if (item.type === 'commandExecution') {
    const output = item.aggregatedOutput ?? '';
    return status === 'declined' ? `declined${output ? `: ${output}` : ''}` : output;
  }
  if (item.type === 'fileChange') return `${status}: ${(item.changes ?? []).map((change) => change.path).join(', ')}`;
  return status;
}
