import type { RuntimeEvent, Usage } from '../core/events/index.js';
import type { Output } from './output.js';

/**
 * The live view of a session for people: assistant text as it streams, one line per tool call
 * with its short label and result status, permission decisions, errors, and usage at the end;
 * logged warnings go to stderr.
 * In --json mode every event is printed as one JSON line instead.
 */
export function createLiveRenderer(
  out: Output,
  options: { showThinking?: boolean; limitationsSaid?: boolean } = {},
): (event: RuntimeEvent) => void {
  const streamed = new Set<string>();
  const announced = new Set<string>();
  const labels = new Map<string, string>();
  let midLine = false;
  const endLine = (): void => {
    if (midLine) out.write('\n');
    midLine = false;
  };
  const say = (text: string): void => {
    endLine();
    out.line(text);
  };

  return (event) => {
    if (out.json) {
      out.record(event);
      return;
    }
    switch (event.type) {
      case 'assistant.delta':
        if (event.thinking && !options.showThinking) return;
        streamed.add(event.messageId);
        out.write(event.text);
        midLine = !event.text.endsWith('\n');
        return;
      case 'assistant.message':
        if (!streamed.has(event.messageId) && event.text) say(event.text);
        else endLine();
        return;
      case 'tool.call':
        labels.set(event.toolUseId, event.label);
        if ((event.phase === 'input' || event.phase === 'queued' || event.phase === 'running') && !announced.has(event.toolUseId)) {
          announced.add(event.toolUseId);
          say(`▸ ${event.label}`);
        }
        return;
      case 'tool.result': {
        const label = labels.get(event.toolUseId) ?? event.toolUseId;
        const detail = event.isError ? ` — ${firstLine(event.output)}` : '';
        say(`  ${event.isError ? '✗' : '✓'} ${label}${detail}`);
        return;
      }
      case 'permission.decided':
        say(`  permission ${event.decision === 'allow' ? 'granted' : 'denied'} by ${event.by}${event.reason ? ` (${event.reason})` : ''}`);
        return;
      case 'question.answered':
        say(`  question ${event.cancelled ? 'declined' : 'answered'} by ${event.by}`);
        return;
      case 'error':
        say(`! ${event.message}`);
        return;
      case 'model.warning':
        say(`! model ${event.model} refused: ${event.message}`);
        return;
      case 'log':
        // A turn's limitation warnings, when the command already printed them on stderr before the turn.
        if (options.limitationsSaid && /^turn:[^:]+:limitation:/.test(event.key)) return;
        // Warnings (e.g. a turn's settings notes) are diagnostics: stderr, like the CLI's own.
        if (event.level === 'warn' || event.level === 'error') {
          endLine();
          out.info(`! ${event.message}`);
        }
        return;
      case 'turn.completed':
        say(
          `— ${event.outcome.status}${event.outcome.reason !== event.outcome.status ? ` (${event.outcome.reason})` : ''} · ${formatUsage(event.outcome.usage)}`,
        );
        return;
      default:
        return;
    }
  };
}

export function formatUsage(usage: Usage): string {
  if (!usage.reported) return 'usage not reported';
  const parts = [`${usage.inputTokens ?? 0} in`, `${usage.outputTokens ?? 0} out`];
  if (usage.cacheReadTokens) parts.push(`${usage.cacheReadTokens} cache read`);
  return `${parts.join(' / ')} tokens`;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
