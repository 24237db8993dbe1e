import type { ImportedSession } from '../../../core/adapter.js';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';
import type { EventDraft, Usage } from '../../../core/events/index.js';
import { toolKind, toolLabel } from '../tool-labels.js';
import {
  MessageLineSchema,
  MessageUsageSchema,
  OtherLineSchema,
  SessionStartLineSchema,
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolResultBlockSchema,
  ToolUseBlockSchema,
  TurnOutcomeLineSchema,
  type MessageLine,
  type SessionStartLine,
} from './journal-schema.js';
import { journalHomePath } from './journal-paths.js';

/**
 * Parses one droid session journal into an {@link ImportedSession}: all or nothing. Keys are
 * `import:<line>:…`, so the same journal imported again (droid appends) adds only new lines.
 */
export function parseDroidJournal(content: string, sourcePath: string): ImportedSession {
  const lines = splitLines(content, sourcePath);
  const start = sessionStart(lines, sourcePath);
  const nativeSessionId = nativeId(start, sourcePath);
  const toolUseCounts = countToolUses(lines);
  const events: EventDraft[] = [];
  const project = new TurnTracker(events);

  for (const { number, value } of lines.slice(1)) {
    const kind = OtherLineSchema.parse(value).type;
    if (kind === 'message') {
      const parsed = MessageLineSchema.safeParse(value);
      if (!parsed.success) throw refused(sourcePath, `line ${number} is not a droid message line`);
      projectMessage(parsed.data, number, toolUseCounts, project, events);
    } else if (kind === 'agent_turn_outcome') {
      const parsed = TurnOutcomeLineSchema.safeParse(value);
      if (!parsed.success) throw refused(sourcePath, `line ${number} is not a droid turn outcome`);
      project.outcome(parsed.data.turnId, parsed.data.reason, number);
    } else {
      events.push({ type: 'native', key: `import:${number}:${kind}`, nativeType: `droid.${kind}`, payload: value });
    }
  }

  const { id, sessionId, title, cwd, parent, callingSessionId, type, ...rest } = start;
  void id;
  void sessionId;
  void type;
  return {
    nativeSessionId,
    workspace: cwd,
    title,
    kind: callingSessionId ? 'sub-session' : parent ? 'fork' : 'top-level',
    parentNativeSessionId: callingSessionId ?? parent,
    nativeDetails: rest,
    events,
    homeFiles: [{ path: journalHomePath(cwd, nativeSessionId), content, mode: 0o600 }],
  };
}

interface Line {
  number: number;
  value: Record<string, unknown>;
}

// Every non-blank line must be a JSON object with a `type`; one bad line refuses the file.
function splitLines(content: string, sourcePath: string): Line[] {
  const lines: Line[] = [];
  for (const [index, text] of content.split('\n').entries()) {
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw refused(sourcePath, `line ${index + 1} is not JSON`);
    }
    if (!OtherLineSchema.safeParse(value).success) throw refused(sourcePath, `line ${index + 1} has no journal line type`);
    lines.push({ number: index + 1, value: value as Record<string, unknown> });
  }
  return lines;
}

function sessionStart(lines: readonly Line[], sourcePath: string): SessionStartLine {
  const first = lines[0];
  if (!first) throw refused(sourcePath, 'it is empty');
  const parsed = SessionStartLineSchema.safeParse(first.value);
  if (!parsed.success) throw refused(sourcePath, `line ${first.number} is not a droid session_start line`);
  return parsed.data;
}

// `sessionId` is the id; the legacy `id` only where it is the only one; both and different: refused.
function nativeId(start: SessionStartLine, sourcePath: string): string {
  if (start.sessionId && start.id && start.sessionId !== start.id) {
    throw refused(sourcePath, `its session_start names two different ids (sessionId ${start.sessionId}, id ${start.id})`);
  }
  const id = start.sessionId ?? start.id;
  if (!id) throw refused(sourcePath, 'its session_start names no session id');
  return id;
}

function countToolUses(lines: readonly Line[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { value } of lines) {
    const parsed = MessageLineSchema.safeParse(value);
    if (!parsed.success || !Array.isArray(parsed.data.message.content)) continue;
    for (const block of parsed.data.message.content) {
      const use = ToolUseBlockSchema.safeParse(block);
      if (use.success) counts.set(use.data.id, (counts.get(use.data.id) ?? 0) + 1);
    }
  }
  return counts;
}

// One message line → events. A retry that reuses its id (`parentId == id`) is its own
// observation: keys carry the line number, never the message id alone.
function projectMessage(
  line: MessageLine,
  number: number,
  toolUses: ReadonlyMap<string, number>,
  turns: TurnTracker,
  out: EventDraft[],
): void {
  const { role, content, modelId, visibility } = line.message;
  const base = `import:${number}`;
  if (role === 'user' && visibility === undefined && !line.id.startsWith('context-')) {
    const text = typeof content === 'string' ? content : content.flatMap((b) => blockText(b)).join('\n');
    const results = typeof content === 'string' ? [] : content.filter((b) => b.type === 'tool_result');
    if (results.length === 0) {
      turns.start(line.id, text, number, out);
      return;
    }
  }
  if (role === 'assistant' && modelId) turns.model(modelId);
  if (typeof content === 'string') {
    if (role === 'assistant') turns.text(content);
    out.push(
      role === 'assistant' ? { type: 'assistant.message', key: `${base}:text`, messageId: line.id, text: content } : nativeOf(base, line),
    );
    return;
  }
  let mapped = false;
  for (const [index, block] of content.entries()) {
    const key = `${base}:${index}`;
    const text = TextBlockSchema.safeParse(block);
    const thinking = ThinkingBlockSchema.safeParse(block);
    const use = ToolUseBlockSchema.safeParse(block);
    const result = ToolResultBlockSchema.safeParse(block);
    if (role === 'assistant' && text.success) {
      turns.text(text.data.text);
      out.push({ type: 'assistant.message', key, messageId: `${line.id}:${index}`, text: text.data.text });
    } else if (role === 'assistant' && thinking.success) {
      out.push({ type: 'assistant.message', key, messageId: `${line.id}:${index}`, text: '', thinking: thinking.data.thinking });
    } else if (use.success) {
      const toolUseId = toolUses.get(use.data.id) === 1 ? use.data.id : `${use.data.id}@${number}:${index}`;
      const { name, input } = use.data;
      out.push({ type: 'tool.call', key, toolUseId, name, kind: toolKind(name), label: toolLabel(name, input), phase: 'running', input });
    } else if (result.success && toolUses.get(result.data.tool_use_id) === 1) {
      out.push({
        type: 'tool.result',
        key,
        toolUseId: result.data.tool_use_id,
        isError: result.data.is_error === true,
        output: resultText(result.data.content),
      });
    } else {
      // Not mapped (an unjoinable result, an image, a context reminder): kept as it is.
      out.push({ type: 'native', key, nativeType: `droid.message.${block.type}`, payload: { messageId: line.id, role, block } });
      continue;
    }
    mapped = true;
  }
  const usage = messageUsage(line.message.usage);
  if (usage) out.push({ type: 'usage', key: `${base}:usage`, scope: 'turn', usage });
  if (!mapped && content.length === 0) out.push(nativeOf(base, line));
}

function nativeOf(base: string, line: MessageLine): EventDraft {
  return { type: 'native', key: `${base}:message`, nativeType: 'droid.message', payload: line };
}

// The text of a text block, as a list of zero or one.
function blockText(block: unknown): string[] {
  const parsed = TextBlockSchema.safeParse(block);
  return parsed.success ? [parsed.data.text] : [];
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => blockText(b)[0] ?? JSON.stringify(b)).join('\n');
  return JSON.stringify(content ?? '');
}

// Usage as reported; all-zero placeholders are no usage at all.
function messageUsage(raw: unknown): Usage | undefined {
  const parsed = MessageUsageSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const u = parsed.data;
  const inputTokens = u.input_tokens ?? u.inputTokens;
  const outputTokens = u.output_tokens ?? u.outputTokens;
  const cacheReadTokens = u.cache_read_input_tokens ?? u.cacheReadTokens;
  if (!inputTokens && !outputTokens && !cacheReadTokens) return undefined;
  return {
    reported: true,
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(cacheReadTokens !== undefined ? { cacheReadTokens } : {}),
  };
}

// The user prompts of the journal become imported turns (`imported-<n>`), settled by droid's
// agent_turn_outcome lines: the history reads like the runs One Works records itself.
class TurnTracker {
  readonly #out: EventDraft[];
  #turns = new Map<string, { runId: string; text: string; model?: string }>();
  #current: { runId: string; text: string; model?: string } | undefined;
  #count = 0;

  constructor(out: EventDraft[]) {
    this.#out = out;
  }

  start(messageId: string, prompt: string, line: number, out: EventDraft[]): void {
    this.#count += 1;
    const turn = { runId: `imported-${this.#count}`, text: '' };
    this.#turns.set(messageId, turn);
    this.#current = turn;
    out.push({ type: 'turn.queued', key: `import:${line}:turn`, runId: turn.runId, prompt });
  }

  model(modelId: string): void {
    if (this.#current && this.#current.model === undefined) {
      this.#current.model = modelId;
    }
  }

  text(text: string): void {
    if (this.#current) this.#current.text = text;
  }

  outcome(turnId: string, reason: string, line: number): void {
    const turn = this.#turns.get(turnId);
    if (!turn) {
      this.#out.push({
        type: 'native',
        key: `import:${line}:agent_turn_outcome`,
        nativeType: 'droid.agent_turn_outcome',
        payload: { turnId, reason },
      });
      return;
    }
    const status = reason === 'completed' ? 'completed' : reason === 'cancelled' ? 'interrupted' : 'failed';
    this.#out.push({
      type: 'turn.completed',
      key: `import:${line}:outcome`,
      runId: turn.runId,
      outcome: { status, reason, text: turn.text, usage: { reported: false } },
    });
  }
}

function refused(sourcePath: string, why: string): OneWorksError {
  return new OneWorksError(ERROR_CODES.IMPORT_REFUSED, `refused ${sourcePath}: ${why}; nothing of it was imported`, {
    data: { path: sourcePath },
  });
}
