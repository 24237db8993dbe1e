import type { EventDraft, TurnStatus, Usage } from '../../core/events/index.js';
import { claudeToolKind, claudeToolLabel } from './tools.js';
import type { ContentBlock, ResultMessage, StdoutMessage } from './wire.js';

/**
 * Claude Code's stdout messages → One Works events, keyed by native ids (message id and block
 * index, tool_use id, hook id) so a re-sent fact is written once. A resumed process does not
 * replay history on stdout (2.1.333), so nothing is re-emitted there either.
 */
export class ClaudeProjector {
  readonly #workspace: string;
  #liveMessageId = 'pending';
  #deltaCount = 0;
  #turnText: string[] = [];
  readonly #openTools = new Map<string, string>();

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  beginTurn(): void {
    this.#turnText = [];
  }

  /** The assistant text of the current turn, from committed messages. */
  turnText(): string {
    return this.#turnText.join('\n');
  }

  project(message: StdoutMessage): EventDraft[] {
    switch (message.type) {
      case 'stream_event':
        return this.#streamEvent(message);
      case 'assistant':
        return this.#assistant(message);
      case 'user':
        return this.#user(message);
      case 'system':
        return this.#system(message);
      default:
        return [];
    }
  }

  #streamEvent(message: Extract<StdoutMessage, { type: 'stream_event' }>): EventDraft[] {
    const event = message.event;
    if (event.type === 'message_start' && event.message?.id) this.#liveMessageId = event.message.id;
    if (event.type !== 'content_block_delta' || !event.delta) return [];
    const text =
      event.delta.type === 'text_delta' ? event.delta.text : event.delta.type === 'thinking_delta' ? event.delta.thinking : undefined;
    if (!text) return [];
    this.#deltaCount += 1;
    return [
      {
        type: 'assistant.delta',
        key: `delta:${this.#liveMessageId}:${event.index ?? 0}:${this.#deltaCount}`,
        messageId: this.#liveMessageId,
        text,
        ...(event.delta.type === 'thinking_delta' ? { thinking: true } : {}),
      },
    ];
  }

  #assistant(message: Extract<StdoutMessage, { type: 'assistant' }>): EventDraft[] {
    const messageId = message.message.id ?? message.uuid ?? 'unknown';
    const drafts: EventDraft[] = [];
    message.message.content.forEach((block: ContentBlock, index) => {
      if (block.type === 'text' && block.text) {
        if (message.parent_tool_use_id == null) this.#turnText.push(block.text);
        drafts.push({
          type: 'assistant.message',
          key: `message:${messageId}:${index}`,
          messageId: `${messageId}:${index}`,
          text: block.text,
        });
      } else if (block.type === 'tool_use' && block.id && block.name) {
        this.#openTools.set(block.id, block.name);
        drafts.push({
          type: 'tool.call',
          key: `tool.call:${block.id}:input`,
          toolUseId: block.id,
          name: block.name,
          kind: claudeToolKind(block.name),
          label: claudeToolLabel(block.name, block.input, this.#workspace),
          phase: 'input',
          input: block.input,
        });
      }
    });
    return drafts;
  }

  #user(message: Extract<StdoutMessage, { type: 'user' }>): EventDraft[] {
    const content = message.message.content;
    if (!Array.isArray(content)) return [];
    const drafts: EventDraft[] = [];
    for (const block of content) {
      if (block.type !== 'tool_result' || !block.tool_use_id) continue;
      this.#openTools.delete(block.tool_use_id);
      drafts.push({
        type: 'tool.result',
        key: `tool.result:${block.tool_use_id}`,
        toolUseId: block.tool_use_id,
        isError: block.is_error === true,
        output: resultText(block.content),
        closedBy: 'agent',
      });
    }
    return drafts;
  }

  #system(message: Extract<StdoutMessage, { type: 'system' }>): EventDraft[] {
    if ((message.subtype === 'hook_started' || message.subtype === 'hook_response') && message.hook_id) {
      const phase = message.subtype === 'hook_started' ? 'started' : 'completed';
      return [
        {
          type: 'hook',
          key: `hook:${message.hook_id}:${phase}`,
          hookId: message.hook_id,
          event: message.hook_event ?? 'unknown',
          phase,
          ...(message.outcome ? { status: message.outcome } : {}),
        },
      ];
    }
    if (message.subtype === 'status' && message.uuid) {
      return [{ type: 'working.changed', key: `status:${message.uuid}`, state: message.status ?? 'idle' }];
    }
    return [];
  }

  /** Closes tool spans still open (the child died, or the turn was interrupted mid-tool). */
  closeOpenSpans(why: string): EventDraft[] {
    const drafts: EventDraft[] = [...this.#openTools.keys()].map((toolUseId) => ({
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

/** Usage and cost of a `result` message (the turn's totals). */
export function resultUsage(result: ResultMessage): Usage {
  const u = result.usage;
  if (!u) return { reported: false };
  return {
    reported: true,
    ...(u.input_tokens === undefined ? {} : { inputTokens: u.input_tokens }),
    ...(u.output_tokens === undefined ? {} : { outputTokens: u.output_tokens }),
    ...(u.cache_read_input_tokens === undefined ? {} : { cacheReadTokens: u.cache_read_input_tokens }),
    ...(u.cache_creation_input_tokens === undefined ? {} : { cacheCreationTokens: u.cache_creation_input_tokens }),
    ...(result.total_cost_usd === undefined ? {} : { costUsd: result.total_cost_usd }),
  };
}

/** How a `result` ends a turn: success → completed; an error after an interrupt → interrupted. */
export function resultStatus(result: ResultMessage, interrupted: boolean): { status: TurnStatus; reason: string } {
  if (result.subtype === 'success' && result.is_error !== true) return { status: 'completed', reason: 'completed' };
  if (interrupted) return { status: 'interrupted', reason: 'cancelled' };
  return { status: 'failed', reason: result.subtype };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof (part as { text?: unknown })?.text === 'string' ? (part as { text: string }).text : '')).join('');
}
