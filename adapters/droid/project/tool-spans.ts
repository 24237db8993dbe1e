import type { EventDraft } from '../../../core/events/index.js';
import { toolKind, toolLabel } from '../tool-labels.js';
import { hasInput } from './content.js';
import { droidEventKeys } from './keys.js';

type Phase = 'open' | 'input' | 'queued' | 'running';

interface Span {
  name: string;
  input: unknown;
  emitted: Set<Phase>;
  closed: boolean;
}

/**
 * One span per native tool-use id: `open` → `input` → `queued` → `running`, closed by exactly one
 * `tool.result`. Each phase is emitted once per span, whatever droid repeats: `tool_call` comes
 * twice (empty input, then full input), and `tool_result` twice on an interrupt (0.225.2).
 */
export class ToolSpans {
  readonly #workspace: string;
  readonly #spans = new Map<string, Span>();

  constructor(workspace: string) {
    this.#workspace = workspace;
  }

  /** A sighting of a tool use (`tool_call`, or a `tool_use` block of a message): opens the span, then records the input once it is non-empty. */
  sight(id: string, name: string, input: unknown): EventDraft[] {
    const span = this.#span(id, name);
    const events = this.#ensureOpen(id, span);
    if (hasInput(input)) {
      span.input = input;
      if (!span.emitted.has('input')) {
        span.emitted.add('input');
        events.push(this.#draft(id, span, 'input', input));
      }
    }
    return events;
  }

  /** `queued` / `running` (droid's `executing`); opens the span first if no sighting came before. */
  phase(id: string, name: string | undefined, phase: 'queued' | 'running'): EventDraft[] {
    const span = this.#span(id, name);
    const events = this.#ensureOpen(id, span);
    if (!span.emitted.has(phase) && !span.closed) {
      span.emitted.add(phase);
      events.push(this.#draft(id, span, phase));
    }
    return events;
  }

  /** Closes a span with its result; a second result for the same id yields nothing. */
  result(id: string, isError: boolean, output: string): EventDraft[] {
    const span = this.#span(id, undefined);
    if (span.closed) return [];
    span.closed = true;
    return [{ type: 'tool.result', key: droidEventKeys.tool(id, 'result'), toolUseId: id, isError, output, closedBy: 'agent' }];
  }

  /** Closes every span that was opened and never got a result (the child went away mid-tool). */
  closeOpen(reason: string): EventDraft[] {
    const events: EventDraft[] = [];
    for (const [id, span] of this.#spans) {
      if (span.closed || !span.emitted.has('open')) continue;
      span.closed = true;
      events.push({
        type: 'tool.result',
        key: droidEventKeys.tool(id, 'result'),
        toolUseId: id,
        isError: true,
        output: `tool did not finish: ${reason}`,
        closedBy: 'runtime',
      });
    }
    return events;
  }

  /** Ids of spans that are open (opened, no result yet), in opening order. */
  openIds(): string[] {
    return [...this.#spans].filter(([, s]) => s.emitted.has('open') && !s.closed).map(([id]) => id);
  }

  #span(id: string, name: string | undefined): Span {
    let span = this.#spans.get(id);
    if (!span) {
      span = { name: name ?? 'unknown', input: undefined, emitted: new Set(), closed: false };
      this.#spans.set(id, span);
    } else if (name !== undefined && span.name === 'unknown') {
      span.name = name;
    }
    return span;
  }

  #ensureOpen(id: string, span: Span): EventDraft[] {
    if (span.emitted.has('open') || span.closed) return [];
    span.emitted.add('open');
    return [this.#draft(id, span, 'open')];
  }

  #draft(id: string, span: Span, phase: Phase, input?: unknown): EventDraft {
    return {
      type: 'tool.call',
      key: droidEventKeys.tool(id, phase),
      toolUseId: id,
      name: span.name,
      kind: toolKind(span.name),
      label: toolLabel(span.name, span.input, this.#workspace),
      phase,
      ...(input === undefined ? {} : { input }),
    };
  }
}
